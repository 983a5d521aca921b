"""Fixed inputs of the skill-selection conformance check (shared by the test and ``regenerate_skills.py``)."""

ALFWORLD_PATHS = (
    "pick_and_place_simple-Book-None-Desk-310/trial_T20190908_064408_405536",
    "pick_two_obj_and_place-CD-None-Safe-308/trial_T20190907_050942_897916",
    "look_at_obj_in_light-AlarmClock-None-DeskLamp-301/trial_T20190907_174127_043461",
    "pick_heat_then_place_in_recep-Egg-None-GarbageCan-6/trial_T20190907_202210_567211",
    "pick_cool_then_place_in_recep-Apple-None-Microwave-19/trial_T20190906_210805_698141",
    "pick_clean_then_place_in_recep-Cloth-None-CounterTop-424/trial_T20190908_010010_114950",
    "some_other_task-Thing-None-Place-1/trial_0",
)
"""ALFWorld task ids (``<task folder>/<trial>``, what upstream's game path contains), one per task type."""

_FOR = "Now it's your turn to respond for the current step. Your question: {q}"
_BARE = "Your question: {q}"
_COMPARE_Q = "Which film came out first, Alpha or Beta?"
_PLAIN_Q = "Who wrote the novel Gamma?"

SEARCH_CASES = tuple(
    (source, template.format(q=question))
    for source in ("nq", "triviaqa", "popqa", "hotpotqa", "2wikimultihopqa", "musique", "bamboogle", "unknown")
    for template in (_FOR, _BARE)
    for question in (_COMPARE_Q, _PLAIN_Q)
)
"""(data source, prompt): every dataset, with and without ``for`` in the prompt, comparison or not."""

WEBSHOP_PROMPTS = (
    "Your task is to: find me a cotton shirt and leather boots, and price lower than 50.00 dollars",
    "Your task is to: i need a usb charger and a phone case for travel",
    "Your task is to: i want a scented candle, price lower than 30.00 dollars",
    "Your task is to: i'm looking for gluten free snacks",
    "Your task is to: which one is cheaper, the red one or the blue one",
    "Your task is to: i want a moisturizer cream and a brush",
    "YOUR TASK IS TO: A WOOL SCARF AND A HAT",
)
"""WebShop prompts: categories by keyword (one, several, none), the comparison test, upper case."""
