"""Tool names, shared by the code that defines each tool and the code that uses it."""

SEARCH_CORPUS = "search_corpus"
READ_PASSAGE = "read_passage"
WEB_SEARCH = "web_search"
FETCH_PAGE = "fetch_page"
SUBMIT_FINDINGS = "submit_findings"
DELEGATE = "delegate"
SUBMIT_RUBRIC = "submit_rubric"  # the judge's verdict on one report
SUBMIT_PREFERENCE = "submit_preference"  # the judge's preference between two reports

SEARCH_TOOLS = (SEARCH_CORPUS, WEB_SEARCH)
READ_FINDINGS = "read_findings"

# Tools that serve the same purpose over different material: a search tool and the reader of its
# results. When a family's tool fails, another family of the run can replace it (replanning).
TOOL_FAMILIES = ((SEARCH_CORPUS, READ_PASSAGE), (WEB_SEARCH, FETCH_PAGE))
