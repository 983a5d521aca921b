"""Regenerate ``multi_turn_cases.json``: bfcl-eval's own multi-turn prompting path on fixed replies.

For each (entry, reply) below, bfcl-eval's ``default_decode_execute_prompting`` turns the reply into
execution strings and ``execute_multi_turn_func_call`` runs them on fresh backends loaded with the
entry's initial configuration, as its multi-turn inference does for a prompting model (model name
``agentgym``, which its executor writes into instance names). Recorded: the execution strings, the
result strings, and the digest of the backends' state afterwards (``backend_state.py``), or the
decode error when the conversion raises (upstream then takes the reply as the model's words).

Not run by pytest. Upstream ``eval``s the replies: only the fixed replies below, in a process of its own:

    python tests/conformance/bfcl_prompting/regenerate_multi_turn_cases.py

with bfcl-eval installed (the version recorded in the output).
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from backend_state import state_digest  # noqa: E402

MODEL = "agentgym"

CASES = [
    ("multi_turn_base_0", "[mkdir(dir_name='new')]", "a plain call"),
    ("multi_turn_base_0", "[touch(file_name='t.txt'), echo(content=('a', 'b'), file_name='t.txt')]",
     "a tuple argument is stored as a tuple"),
    ("multi_turn_base_0", "[touch(file_name='t.txt'), echo(content={'x': ('a',), 'y': {'z': [1, (2,)]}}, "
                          "file_name='t.txt')]", "tuples inside a dict and a list"),
    ("multi_turn_base_0", "[touch(file_name='t.txt'), echo(content='run ls() then cat  (t) and print (x)', "
                          "file_name='t.txt')]", "method names inside a string are rewritten with the instance name"),
    ("multi_turn_base_0", "[touch(file_name='t.txt'), echo(content=['ls()', ('x\\ncat(1)',)], file_name='t.txt')]",
     "the rewrite runs over the source form (an escaped newline hides a name)"),
    ("multi_turn_base_0", "[mkdir(dir_name={'ls()': 1})]", "a dict key is rewritten too"),
    ("multi_turn_base_0", "[cd(folder=pwd(a=1))]", "a nested call with keywords runs first and its error fails the call"),
    ("multi_turn_base_0", "[mkdir(dir_name=ls(a=mkdir(dir_name='inner')))]", "nested calls run inside out"),
    ("multi_turn_base_0", "[cd(folder=ls(a=True))]", "a nested call's result is the argument"),
    ("multi_turn_base_0", "[mkdir(dir_name=pwd(x={'a': 1}))]", "a plain dict inside a nested call"),
    ("multi_turn_base_0", "[mkdir(dir_name={'a': {'b': 1}})]", "a dict of dicts is read as a call"),
    ("multi_turn_base_0", "[mkdir(dir_name={'ls': {'a': True}, 'other': {}})]", "a dict of dicts runs its first key"),
    ("multi_turn_base_0", "[mkdir(dir_name={1: 'a'})]", "a dict key that is not a string becomes one"),
    ("multi_turn_base_0", "[mkdir(dir_name={})]", "an empty dict fails the conversion"),
    ("multi_turn_base_0", "[touch(file_name='t.txt'), echo(content={'x': {'y': {}}}, file_name='t.txt')]",
     "an empty dict deep inside fails the conversion of the whole reply"),
    ("multi_turn_base_0", "[post_tweet(content={'k': {}, 'j': 2})]", "an empty dict among other values"),
    ("multi_turn_base_0", "[post_tweet(content='hi', tags=('#a', '#b'), mentions=['@x'])]", "a tuple to a backend that refuses"),
    ("multi_turn_base_0", "[mkdir(dir_name=\"it's\")]", "a quote inside a string"),
    ("multi_turn_base_0", "[ls(a=True), cd(folder='document'), ls()]", "several calls in order"),
    ("multi_turn_base_15", "[mean(numbers=(1, 2, 3))]", "a tuple to a stateless backend"),
    ("multi_turn_base_15", "[touch(file_name='m.txt'), echo(content=mean(numbers=[1, 2]), file_name='m.txt')]",
     "a nested call's dict result is written"),
    ("multi_turn_base_15", "[echo(content=pwd(), file_name='m.txt')]", "a nested call without keywords stays text"),
    ("multi_turn_base_0", "[foo(x=1)]", "a name that is no backend method: NameError"),
    ("multi_turn_base_0", "[a.mkdir(dir_name='x')]", "a dotted name: NameError on its first part"),
    ("multi_turn_base_0", "[len(obj='abc')]", "DEPARTURE: a Python builtin, which upstream's eval calls"),
]


def main() -> None:
    """Run every case through bfcl-eval and write the outputs."""
    import bfcl_eval
    import bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils as executor
    from bfcl_eval.model_handler.utils import default_decode_execute_prompting

    data = Path(bfcl_eval.__file__).parent / "data"
    entries = {}
    for name in ("BFCL_v4_multi_turn_base.json",):
        for line in (data / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                entries[entry["id"]] = entry
    out = []
    for entry_id, reply, what in CASES:
        entry = entries[entry_id]
        case = {"entry": entry_id, "reply": reply, "what": what}
        for name in [n for n in vars(executor) if n.startswith(f"{MODEL}_")]:  # fresh backends per case
            delattr(executor, name)
        try:
            strings = default_decode_execute_prompting(reply)
        except Exception as exc:  # noqa: BLE001 - upstream's decode failure is the recorded outcome
            case["decode_error"] = type(exc).__name__
            out.append(case)
            continue
        results, instances = executor.execute_multi_turn_func_call(
            strings, entry["initial_config"], entry["involved_classes"], MODEL, entry_id)
        case.update(execution_strings=strings, results=results, state=state_digest(instances))
        out.append(case)
    record = {"upstream": {"package": "bfcl-eval", "version": importlib.metadata.version("bfcl-eval"),
                           "code": ["model_handler/utils.py:default_decode_execute_prompting",
                                    "eval_checker/multi_turn_eval/multi_turn_utils.py:execute_multi_turn_func_call"],
                           "model_name": MODEL},
              "cases": out}
    (HERE / "multi_turn_cases.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
