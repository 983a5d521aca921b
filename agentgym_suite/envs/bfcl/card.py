"""What BFCL-v0 is measured against: the bfcl-eval wheel's own checkers on the same outputs."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="Berkeley Function Calling Leaderboard (BFCL) v4",
    version="bfcl-eval 2026.3.23 (PyPI)",
    upstream="github.com/ShishirPatil/gorilla (berkeley-function-call-leaderboard), PyPI bfcl-eval",
    data_licence="Apache-2.0 (data ship in the bfcl-eval wheel)",
    conformance=(
        "single-turn verdicts (AST categories in Python, Java, JavaScript; irrelevance, live_irrelevance, "
        "live_relevance) equal to bfcl-eval's ast_checker and relevance rule on gold calls and perturbations "
        "(wrong value or type, missing argument, extra call, wrong function)",
        "multi-turn verdicts (base, miss_func, miss_param, long_context) equal to bfcl-eval's multi_turn_checker on "
        "gold plays and perturbations (a step dropped, a wrong id, an extra write, a call after a failure, a turn "
        "past the step limit)",
        "format_sensitivity verdicts and report equal to bfcl-eval's format_sensitivity_runner (python replies "
        "judged on its decoder's values, a tuple for a list included)",
        "overall leaderboard columns equal to bfcl-eval's generate_leaderboard_csv on the same per-category accuracies",
        "prompting-style replies decoded by bfcl-eval's own default_decode_ast_prompting: its recorded decodes of "
        "438 fixed and random python call lists reproduced exactly (arithmetic, which it evaluates with eval, read by "
        "the suite's bounded evaluator instead); irrelevance, live_irrelevance and live_relevance verdicts on prompting "
        "replies equal to its relevance rule as a prompting model (every decoded call counts, also one the suite "
        "cannot carry as JSON)",
        "Java and JavaScript verdicts in the prompting style (as Qwen/Qwen3-8B) and the text <tool_call> style (as "
        "Qwen/Qwen3-8B-FC, underscore_to_dot off, and gpt-4o-2024-11-20-FC, on) equal to bfcl-eval's decode and "
        "ast_checker on the oracle's answers written bare and quoted and on perturbations (a wrong value, escaped "
        "quotes, 5L, Enum.VALUE, a bare number or list for a string, the other name form, a code fence, a missing "
        "argument); their prompting system prompts equal bfcl-eval's",
        "multi-turn prompting replies run as bfcl-eval's default_decode_execute_prompting and "
        "execute_multi_turn_func_call run them, without eval: result strings (the texts the model reads) and backend "
        "state equal on 25 fixed "
        "replies (tuples, nested calls, dicts read as calls, method names inside strings, replies its conversion "
        "fails on); a call to a name that is no backend method gets its NameError text, one Python resolves there "
        "(a builtin) the suite's refusal (a departure labelled in the episodes where it happens, in both styles)",
        "<tool_call> replies in the prompting style judged as bfcl-eval judges a prompting model's reply: 12 "
        "single-turn replies (Python, parallel, Java, JavaScript, irrelevance, live_relevance; each <tool_call> reply "
        "beside the same calls as a call list) with its decode, format check and ast_checker verdicts, and 3 multi-turn "
        "replies its default_decode_execute_prompting fails on, which the env plays as words (nothing runs, the turn ends)",
        "web-search and memory prompting replies run as bfcl-eval's multi-turn inference runs them (the same decode "
        "and executor, no schema check, bfcl-eval's result texts): result strings and backend state equal on 51 fixed "
        "replies (gold calls, code fences, tuples, positional arguments, nested calls, names inside strings, Python "
        "keywords as names, words) and 8 function-calling ones (its convert_to_function_call; names inside strings "
        "rewritten there too) on bfcl-eval's memory_kv, memory_rec_sum and memory_vector backends; web search "
        "on a recording stand-in for its SerpAPI backend in both runs (decoding and execution strings only: live "
        "search cannot run offline)",
    ),
    conformance_tests=("tests/conformance/test_bfcl.py", "tests/conformance/test_bfcl_prompting.py",
                       "tests/conformance/test_bfcl_java_js.py", "tests/conformance/test_bfcl_multi_turn_prompting.py",
                       "tests/conformance/test_bfcl_agentic_prompting.py",
                       "tests/conformance/test_bfcl_tool_call_prompting.py"),
    cost=EpisodeCost(174.3, "benchmarks/env_step_cost.py BFCL-v0 --kwargs '{\"category\": \"simple\"}' (one step "
                            "= one checked episode; multi-turn 'base': 2930 steps/s) (2026-12-02, load 10.1)"),
    notes="Web search and memory replies are judged by bfcl-eval's agentic_checker; web search answers from an "
          "offline local corpus by default (a declared departure; web_search_backend='serpapi' runs bfcl-eval's "
          "live backend). simple_java_36, _64 and _65 cannot be won with their possible answer on the leaderboard "
          "either: bfcl-eval's Java converter makes every element of an ArrayList of 'any' a string (36, 65), and its "
          "checker compares _64's HashMap answer, which is not a dict of option lists, character by character; "
          "the oracle writes those answers and loses them, as bfcl-eval would score them (its checker passes _64 "
          "with an empty HashMap, a quirk the oracle does not play). No published scores are recorded here yet.",
)
"""BFCL-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""
