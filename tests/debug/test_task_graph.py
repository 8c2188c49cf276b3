"""deps.json as a picture: one box per task, columns by dependency depth, one arrow per edge."""

from html.parser import HTMLParser

from pypto.debug.task_graph import layout, render_html

DEPS = {"tasks": [{"rank": 0, "task": 0, "kernel": "left", "start_ns": 0.0, "end_ns": 10.0, "depends_on": []},
                  {"rank": 0, "task": 1, "kernel": "right", "start_ns": 0.0, "end_ns": 10.0, "depends_on": []},
                  {"rank": 0, "task": 2, "kernel": "combine", "start_ns": 10.0, "end_ns": 20.0, "depends_on": [0, 1]},
                  {"rank": 0, "task": 3, "kernel": "finish", "start_ns": None, "end_ns": None, "depends_on": [2]}],
        "edges": [{"rank": 0, "from": 0, "to": 2}, {"rank": 0, "from": 1, "to": 2}, {"rank": 0, "from": 2, "to": 3}]}


class _Svg(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tasks, self.edges = [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "g" and attrs.get("class") == "task":
            self.tasks.append(int(attrs["data-task"]))
        if tag == "line" and attrs.get("class") == "edge":
            self.edges += 1


def test_columns_are_dependency_depth():
    place = layout(DEPS)
    assert [place[(0, t)][0] for t in range(4)] == [0, 0, 1, 2]
    assert place[(0, 0)][1] != place[(0, 1)][1]          # two tasks of one column get two rows


def test_page_has_a_box_per_task_and_an_arrow_per_edge():
    page = _Svg()
    text = render_html(DEPS)
    page.feed(text)
    assert sorted(page.tasks) == [0, 1, 2, 3] and page.edges == 3
    assert "not finished" in text                          # a task without an end time says so
