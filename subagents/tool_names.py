"""Tool names, shared by the code that defines each tool and the code that uses it."""

SEARCH_CORPUS = "search_corpus"
READ_PASSAGE = "read_passage"
WEB_SEARCH = "web_search"
FETCH_PAGE = "fetch_page"
SUBMIT_FINDINGS = "submit_findings"
DELEGATE = "delegate"

SEARCH_TOOLS = (SEARCH_CORPUS, WEB_SEARCH)
