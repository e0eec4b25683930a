from service.store import placement_rows
from service.store.models import Course, Placement
from testkit.factories import place

LINE_ITEMS = "https://lms.example/courses/1/line_items"


def with_line_items_url(store, placed, url=LINE_ITEMS):
    with store.session() as session:
        course = session.get(Course, session.get(Placement, placed.placement_id).course_id)
        course.line_items_url = url


def test_a_placement_without_line_item_wants_one_where_the_lms_lets_it(store):
    placed = place(store, title="Attention")
    assert placement_rows.line_item_wanted(store, placed.placement_id) is None  # no URL
    with_line_items_url(store, placed)
    wanted = placement_rows.line_item_wanted(store, placed.placement_id)
    assert wanted == placement_rows.LineItemWanted(
        placed.placement_id, placed.platform_id, LINE_ITEMS, "link-1", wanted.lesson_id, "Attention"
    )


def test_a_placement_with_a_line_item_wants_none(store):
    placed = place(store, line_item_url=LINE_ITEMS + "/7")
    with_line_items_url(store, placed)
    assert placement_rows.line_item_wanted(store, placed.placement_id) is None
    assert placement_rows.line_item_wanted(store, placed.placement_id + 99) is None
