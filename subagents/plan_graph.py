"""A plan's tasks as a small DAG: checks (unknown ids, self-dependencies, duplicate ids, cycles)
worded so the lead can act on them, and the longest path a round can take (the critical-path
bound the benchmarks compare wall time with).

Tasks are given as `(id or None, depends_on)` in plan order; positions are 1-based in messages.
"""

from __future__ import annotations

from typing import Mapping, Sequence

TaskRef = tuple[str | None, Sequence[str]]


def _name(i: int, task_id: str | None) -> str:
    return f"task {i + 1}" + (f" ({task_id!r})" if task_id else "")


def graph_problems(tasks: Sequence[TaskRef]) -> list[str]:
    """Everything wrong with the dependencies of a plan; empty when it is a DAG."""
    problems: list[str] = []
    index: dict[str, int] = {}
    for i, (tid, _) in enumerate(tasks):
        if tid is None:
            continue
        if tid in index:
            problems.append(f"task ids must be unique: {tid!r} is the id of tasks {index[tid] + 1} and {i + 1}")
        else:
            index[tid] = i
    ids = ", ".join(map(repr, index)) or "none: give the tasks ids to depend on them"
    for i, (tid, deps) in enumerate(tasks):
        for d in dict.fromkeys(deps):
            if tid is not None and d == tid:
                problems.append(f"{_name(i, tid)} depends on itself; remove {d!r} from its depends_on")
            elif d not in index:
                problems.append(f"{_name(i, tid)} depends on {d!r}, which is not the id of a task in this plan "
                                f"(ids: {ids})")
    if not problems:
        cycle = find_cycle({tid: list(deps) for tid, deps in tasks if tid is not None})
        if cycle:
            problems.append("tasks " + " -> ".join(map(repr, cycle)) + " depend on each other in a cycle; "
                            "remove one of these dependencies")
    return problems


def find_cycle(deps: Mapping[str, Sequence[str]]) -> list[str]:
    """One dependency cycle as a closed path [a, b, …, a], or [] (iterative depth-first search)."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {n: WHITE for n in deps}
    for root in deps:
        if colour[root] != WHITE:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path: list[str] = [root]
        colour[root] = GREY
        while stack:
            node, i = stack[-1]
            children = [d for d in deps.get(node, ()) if d in deps]
            if i < len(children):
                stack[-1] = (node, i + 1)
                child = children[i]
                if colour[child] == GREY:
                    return path[path.index(child):] + [child]
                if colour[child] == WHITE:
                    colour[child] = GREY
                    stack.append((child, 0))
                    path.append(child)
            else:
                colour[node] = BLACK
                stack.pop()
                path.pop()
    return []


def topological_order(deps: Mapping[str, Sequence[str]]) -> list[str]:
    """Nodes with every dependency before its dependents (plan order among independent ones)."""
    order: list[str] = []
    placed: set[str] = set()
    pending = list(deps)
    while pending:
        ready = [n for n in pending if all(d in placed or d not in deps for d in deps[n])]
        if not ready:
            raise ValueError(f"dependency cycle among {pending}")
        for n in ready:
            order.append(n)
            placed.add(n)
        pending = [n for n in pending if n not in placed]
    return order


def longest_path(durations: Mapping[str, float], deps: Mapping[str, Sequence[str]]) -> tuple[float, list[str]]:
    """The critical path through a DAG: (its length, the nodes on it). A node starts when all its
    dependencies have finished, so the round cannot take less than this."""
    finish: dict[str, float] = {}
    via: dict[str, str | None] = {}
    for n in topological_order({n: list(deps.get(n, ())) for n in durations}):
        before = [(finish[d], d) for d in deps.get(n, ()) if d in finish]
        start, prev = max(before) if before else (0.0, None)
        finish[n], via[n] = start + durations[n], prev
    if not finish:
        return 0.0, []
    end = max(finish, key=lambda n: finish[n])
    path: list[str] = []
    node: str | None = end
    while node is not None:
        path.append(node)
        node = via[node]
    return finish[end], path[::-1]
