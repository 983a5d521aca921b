"""``WebShop-v0``: WebShop's shopping task on a local text engine with BM25 product search."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

from agentgym_suite.core.actions import ActionFormat, ParsedAction
from agentgym_suite.core.data import benchmark_dir
from agentgym_suite.core.skills import SkillBook, asks_to_compare
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.envs.webshop.catalogue import SHUFFLE_SEED, Catalogue, load_catalogue, split_goals
from agentgym_suite.envs.webshop.engine import BUY_NOW, NEXT_PAGE, PREV_PAGE, BACK_TO_SEARCH, PRODUCT_WINDOW, ProductSearch, Session
from agentgym_suite.envs.webshop.families import product_family
from agentgym_suite.envs.webshop.nouns import INSTALL_HINT, load_tagger
from agentgym_suite.envs.webshop.prepare import load_or_prepare_nouns
from agentgym_suite.envs.webshop.reward import FUZZY_THRESHOLD, goal_option_values, purchase_reward
from agentgym_suite.envs.webshop.text_match import normalize_color, token_set_ratio

_CACHE: dict[tuple[str, str, int | None, int, str], tuple[Catalogue, ProductSearch]] = {}
_CACHE_LOCK = threading.Lock()

VERL_AGENT_SETTINGS: dict[str, Any] = {"success_reward": 10.0, "max_episode_steps": 15}
"""verl-agent's WebShop runs (GiGPO and the seeds that train on WebShop): the buy step pays 10 when
the purchase scores 1.0 and 0 otherwise, and an episode ends after 15 steps. Pass them to
``gymnasium.make("WebShop-v0", **VERL_AGENT_SETTINGS)`` (15 steps is also the registered default)."""


def shared_catalogue(data_dir: Path, goals: str, num_products: int | None, seed: int,
                     noun_tagger: str = "auto") -> tuple[Catalogue, ProductSearch]:
    """Load (once per process) a catalogue, its noun sets and its search index."""
    tagger = load_tagger(noun_tagger)
    key = (str(Path(data_dir).resolve()), goals, num_products, seed, tagger.name)
    with _CACHE_LOCK:
        if key not in _CACHE:
            catalogue = load_catalogue(Path(data_dir), goals=goals, seed=seed, num_products=num_products)
            catalogue.nouns = load_or_prepare_nouns(catalogue.products, tagger)
            catalogue.noun_tagger = tagger.name
            _CACHE[key] = (catalogue, ProductSearch(catalogue))
        return _CACHE[key]


class WebShopEnv(TextEnv):
    """WebShop (Yao et al., 2022): find and buy the product an instruction asks for.

    Actions are ``search[query]`` (on the search page) and ``click[element]`` (an ASIN, an option
    value, ``next >``, ``< prev``, ``back to search``, ``description``, ``features``,
    ``reviews``, ``buy now``); ``info["admissible_actions"]`` lists them for the current page.
    The episode ends at ``buy now`` with WebShop's reward in [0, 1] as ``info["score"]``;
    ``won`` is a perfect 1.0. The reward is upstream's ``get_reward`` (checked against it in
    ``tests/conformance/webshop``), its type factor from spaCy part-of-speech nouns (the
    ``webshop`` extra); search ranks as Pyserini's BM25 does.

    verl-agent's runs use ``success_reward=10`` and 15 steps (:data:`VERL_AGENT_SETTINGS`).

    Args:
        data_dir: directory with ``items_shuffle_1000.json``, ``items_ins_v2_1000.json`` and
            ``items_human_ins.json`` (default ``$AGENTGYM_DATA/webshop/data``).
        split: ``test`` (the first 500 shuffled goals), ``eval`` (the next 1,000), ``train``
            (the rest) or ``all``.
        goals: ``human`` (WebShop's default human instructions) or ``synthetic``.
        num_products: use only the first N catalogue products.
        reward_scale: the buy step's reward is ``reward_scale * score``.
        success_reward: if set, the buy step's reward is this value when won and 0 otherwise
            (the seeds use 10).
        data_seed: seed of the price draws and goal price bounds.
        noun_tagger: how product names' nouns are found for the type reward: ``spacy`` (as
            upstream; needs the ``webshop`` extra), ``heuristic`` (a POS-free stand-in, declared as a
            departure) or ``auto`` (spaCy when installed).
        show_selected_options: add a ``Selected options`` element to the item page, which
            upstream's text mode does not have (off by default; a declared departure when on).
        **kwargs: ``action_format``, ``privileged``, ``invalid_action``, ``render_mode``.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``purchased``: dict: the product bought (asin and chosen options).
        ``reward_parts``: dict: the parts of the purchase reward (type, attribute, option and price matches).
    """

    benchmark = "webshop"
    invalid_tail_chars = 20  # verl-agent's WebShop projection keeps the last 20 characters
    info_keys: ClassVar[dict[str, str]] = {
        "purchased": "dict: the product bought (asin and chosen options).",
        "reward_parts": "dict: the parts of the purchase reward (type, attribute, option and price matches).",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    default_action_format = "plain"
    prompt_description = "WebShop, a simulated online shopping website"

    def __init__(
        self,
        *,
        data_dir: str | Path | None = None,
        split: str = "test",
        goals: str = "human",
        num_products: int | None = None,
        reward_scale: float = 1.0,
        success_reward: float | None = None,
        data_seed: int = SHUFFLE_SEED,
        noun_tagger: str = "auto",
        show_selected_options: bool = False,
        action_format: str | ActionFormat | None = None,
        privileged: bool = False,
        invalid_action: str = "explain",
        render_mode: str | None = None,
    ) -> None:
        super().__init__(action_format=action_format, privileged=privileged,
                         invalid_action=invalid_action, render_mode=render_mode)
        root = Path(data_dir) if data_dir is not None else benchmark_dir("webshop") / "data"
        self.catalogue, self.search_engine = shared_catalogue(root, goals, num_products, data_seed, noun_tagger)
        self.show_selected_options = bool(show_selected_options)
        self._ids = [str(i) for i in split_goals(len(self.catalogue.goals), split)]
        self.split = split
        self.reward_scale = float(reward_scale)
        self.success_reward = success_reward
        self._session: Session | None = None
        self._goal: dict[str, Any] | None = None

    # ------------------------------------------------------------------ TextEnv API
    fixture_replaces_data = True

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """A small synthetic catalogue in the official format (the real one cannot ship here)."""
        from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue

        return {"data_dir": str(write_synthetic_catalogue(scratch / "webshop"))}

    def task_ids(self) -> list[str]:
        return list(self._ids)

    def task_family(self, task_id: str) -> str:
        """The department of the goal's product in WebShop's category tree (see :mod:`.families`)."""
        return product_family(self.catalogue.goals[int(task_id)])

    skills_released: ClassVar[str] = "webshop"
    skills_fallback: ClassVar[Path | None] = Path(__file__).with_name("skills")

    @classmethod
    def skill_for_task(cls, book: SkillBook, task_id: str, family: str, prompt_text: str) -> str:
        """Released texts: as the authors' provider treats WebShop's ``text`` data source, a prompt
        that passes the comparison test gets the general text only (WebShop has no ``compare``
        skill), any other the skills of every category one of whose keywords the prompt contains
        (the prompt holds the instruction, the page and the history, so the pick can change from
        turn to turn); fallback texts: the goal product's family."""
        if not book.mapped:
            return book.for_family(family)
        return book.compose(["compare"]) if asks_to_compare(prompt_text) else book.for_prompt(prompt_text)

    @property
    def goal(self) -> dict[str, Any]:
        """The current task's goal record (product ASIN, attributes, options, price bound)."""
        if self._goal is None:
            raise RuntimeError("Call reset() first.")
        return self._goal

    def _load_task(self, task_id: str) -> TaskStart:
        self._goal = self.catalogue.goals[int(task_id)]
        self._session = Session(instruction=self._goal["instruction_text"],
                                show_selected_options=self.show_selected_options)
        return TaskStart(
            observation=self._session.render(self.catalogue),
            task=self._goal["instruction_text"],
            admissible_actions=self._session.admissible_actions(self.catalogue),
        )

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        session = self._session
        assert session is not None
        transition = session.act(command, self.catalogue, self.search_engine)
        admissible = session.admissible_actions(self.catalogue)
        if not transition.valid:
            text = f"{transition.message}\n{session.render(self.catalogue)}"
            return StepOutcome(text, 0.0, self._score, action_valid=False, admissible_actions=admissible)
        if not transition.bought:
            return StepOutcome(session.render(self.catalogue), 0.0, 0.0, admissible_actions=admissible)
        asin = session.asin or ""
        product = self.catalogue.by_asin[asin]
        score, parts = purchase_reward(product, self.goal, self.catalogue.prices[asin], session.options,
                                       self.catalogue.nouns)
        won = score >= 1.0 - 1e-9
        if self.success_reward is not None:
            reward = float(self.success_reward) if won else 0.0
        else:
            reward = self.reward_scale * score
        return StepOutcome(
            session.render(self.catalogue, score=score), reward, score, won=won, terminated=True,
            admissible_actions=[], extra={"purchased": {"asin": asin, "options": dict(session.options)},
                                          "reward_parts": parts},
        )

    def evaluation_split(self) -> str:
        """The goals played: ``test`` (the first 500, verl-agent's evaluation set), ``eval``, ``train`` or ``all``."""
        return self.split

    def leaderboard_departures(self) -> list[str]:
        """Departures from WebShop's own harness that this instance's settings bring."""
        reasons = []
        if not self.catalogue.noun_tagger.startswith("spacy"):
            reasons.append("WebShop type reward: product-name nouns come from a POS-free heuristic, not spaCy "
                           f"part-of-speech tags as upstream ({INSTALL_HINT})")
        if self.show_selected_options:
            reasons.append("WebShop observations: show_selected_options adds a 'Selected options' element that "
                           "upstream's text mode does not have")
        return reasons

    def _privileged_info(self) -> dict[str, Any]:
        goal = self.goal
        return {"oracle": self.oracle(), "asin": goal["asin"], "attributes": goal["attributes"],
                "options": goal["goal_options"], "price_upper": goal["price_upper"]}

    # ------------------------------------------------------------------ oracle
    def gold_options(self) -> dict[str, str]:
        """Option name -> value of the gold product that fits the goal's options."""
        goal = self.goal
        if isinstance(goal["goal_options"], dict):
            return dict(goal["goal_options"])
        product = self.catalogue.by_asin[goal["asin"]]
        wanted = [normalize_color(o.lower()) for o in goal_option_values(goal)]
        chosen: dict[str, str] = {}
        for name, values in product["options"].items():
            exact = [v for v in values if normalize_color(v) in wanted]
            if exact:
                chosen[name] = exact[0]
                continue
            scored = [(max((token_set_ratio(w, normalize_color(v)) for w in wanted), default=0), v) for v in values]
            best = max(scored, default=(0, ""))
            if best[0] > FUZZY_THRESHOLD:
                chosen[name] = best[1]
        return chosen

    def _gold_query(self) -> tuple[str, list[str]] | None:
        goal, asin = self.goal, self.goal["asin"]
        for query in (goal["query"], goal["instruction_text"], self.catalogue.by_asin[asin]["Title"], asin):
            results = self.search_engine.search(query)
            if asin in results:
                return query, results
        return None

    def _item_plan(self, current: dict[str, str]) -> list[str]:
        clicks = [f"click[{v}]" for k, v in self.gold_options().items() if current.get(k) != v]
        return clicks + [f"click[{BUY_NOW}]"]

    def _results_plan(self, results: list[str], page_number: int) -> list[str]:
        asin = self.goal["asin"]
        if asin not in results:
            return [f"click[{BACK_TO_SEARCH}]"] + self._search_plan()
        target = results.index(asin) // PRODUCT_WINDOW + 1
        moves = [f"click[{NEXT_PAGE}]"] * (target - page_number) + [f"click[{PREV_PAGE}]"] * (page_number - target)
        return moves + [f"click[{asin.lower()}]"] + self._item_plan({})

    def _search_plan(self) -> list[str]:
        found = self._gold_query()
        if found is None:
            return []
        query, results = found
        return [f"search[{query}]"] + self._results_plan(results, 1)

    def oracle(self) -> list[str]:
        """Search the goal's query, page to the gold product, choose its options and buy it."""
        session = self._session
        if session is None or session.page == "done":
            return []
        if session.page == "search":
            plan = self._search_plan()
        elif session.page == "results":
            plan = self._results_plan(session.results, session.page_number)
        elif session.page == "item" and session.asin == self.goal["asin"]:
            plan = self._item_plan(session.options)
        elif session.page == "item":
            plan = [f"click[{PREV_PAGE}]"] + self._results_plan(session.results, session.page_number)
        else:
            plan = [f"click[{PREV_PAGE}]"] + (self._item_plan(session.options) if session.asin == self.goal["asin"]
                                              else [f"click[{PREV_PAGE}]"] + self._results_plan(session.results, session.page_number))
        return [self.format_action(a) for a in plan]
