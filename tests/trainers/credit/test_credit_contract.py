"""The contract every registered credit plug-in must pass."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import pytest
import torch

from agentgym_suite.trainers.credit.grpo import GRPOCredit
from agentgym_suite.trainers.credit import (
    CREDIT_ASSIGNERS,
    CreditAssigner,
    CreditBatch,
    RowInput,
    TeacherContext,
    TeacherSettings,
    available_credit_assigners,
    get_credit_assigner,
)

NAMES = available_credit_assigners()


def multi_turn_rows(plugin: CreditAssigner) -> list[dict[str, Any]]:
    """Two groups of three trajectories of 1-3 turns. The turns cycle through the plug-in's
    declared roles, and a new position starts with each cycle (SkillRise: solve p, curate p)."""
    rows: list[dict[str, Any]] = []
    rets = {("g0", 0): 10.0, ("g0", 1): 0.0, ("g0", 2): 10.0, ("g1", 0): 1.0, ("g1", 1): 0.0, ("g1", 2): 0.5}
    cycle = len(plugin.roles)
    for (group, k), ret in rets.items():
        turns = 1 + (k + len(group)) % 3
        for t in range(turns):
            role, pos = plugin.roles[t % cycle], t // cycle
            rows.append(dict(group=group, traj=f"{group}-{k}", turn=t, role=role, ret=ret,
                             invalid=(t == 1 and k == 0), pos=pos, anchor=f"{group}-{t % 2}"))
    return rows


def one_turn_rows(plugin: CreditAssigner, returns: list[list[float]]) -> list[dict[str, Any]]:
    """One row per trajectory; all trajectories of a group share their first observation."""
    return [
        dict(group=f"g{g}", traj=f"g{g}-{k}", turn=0, role=plugin.primary_role, ret=r, pos=0, anchor="start")
        for g, group in enumerate(returns)
        for k, r in enumerate(group)
    ]


@pytest.fixture(params=NAMES)
def plugin(request: pytest.FixtureRequest) -> CreditAssigner:
    return get_credit_assigner(request.param)


def aux_inputs(plugin: CreditAssigner, batch: CreditBatch) -> tuple[torch.Tensor, torch.Tensor | None]:
    assert batch.old_logprobs is not None
    logprobs = (batch.old_logprobs + 0.3).clone().requires_grad_(True)
    logits = None
    if plugin.needs_full_logits:  # the student's logits: half the first teacher logits the plug-in reads
        teacher = batch.aux_extras[next(n for n in plugin.required_fields if n in batch.aux_extras)]
        logits = (teacher * 0.5).clone().requires_grad_(True)
    return logprobs, logits


class TestCreditContract:
    """Shapes and masks, zero reward, reduction to the plain variant, stability, aux loss."""

    def test_shape_and_masked_tokens_are_exactly_zero(self, plugin: CreditAssigner, make_batch) -> None:
        batch = make_batch(multi_turn_rows(plugin))
        out = plugin.advantages(batch)
        assert out.advantages.shape == batch.completion_mask.shape
        assert out.advantages.dtype == torch.float32
        assert torch.isfinite(out.advantages).all()
        assert (out.advantages[batch.completion_mask == 0] == 0).all()
        if plugin.one_turn_equivalent()[1] != 0:  # opsd trains with zero advantages
            assert out.advantages[batch.completion_mask == 1].abs().sum() > 0

    def test_metrics_are_namespaced_finite_floats(self, plugin: CreditAssigner, make_batch) -> None:
        batch = make_batch(multi_turn_rows(plugin))
        metrics = dict(plugin.advantages(batch).metrics)
        if plugin.has_aux_loss:
            logprobs, logits = aux_inputs(plugin, batch)
            aux = plugin.aux_loss(batch, logprobs, logits)
            assert aux is not None
            metrics.update(aux.metrics)
        assert metrics, "every plug-in logs at least one metric"
        for key, value in metrics.items():
            assert key.startswith(f"credit/{plugin.name}/"), key
            assert isinstance(value, float) and value == value and abs(value) != float("inf"), (key, value)

    def test_zero_reward_gives_zero_advantage(self, plugin: CreditAssigner, make_batch) -> None:
        rows = multi_turn_rows(plugin)
        for r in rows:
            r["ret"], r["invalid"] = 0.0, False
        out = plugin.advantages(make_batch(rows))
        assert (out.advantages == 0).all()

    def test_one_turn_episode_reduces_to_plain_variant(self, plugin: CreditAssigner, make_batch) -> None:
        rows = one_turn_rows(plugin, [[10.0, 0.0, 10.0, 0.0], [1.0, 0.25, 0.5, 0.0]])
        batch = make_batch(rows, teacher_equals_old=True)
        base_name, scale = plugin.one_turn_equivalent()
        base = get_credit_assigner(base_name)
        as_base = replace(batch, roles=[base.primary_role] * batch.num_rows)  # the base's own row role
        expected = scale * base.advantages(as_base).advantages
        got = plugin.advantages(batch).advantages
        assert torch.allclose(got, expected, atol=1e-5), (got, expected)
        if scale != 0:
            assert got.abs().sum() > 0

    @pytest.mark.parametrize("returns", [[[3.0]], [[2.0, 2.0, 2.0]], [[0.0], [5.0, 5.0]]])
    def test_single_row_groups_and_equal_rewards_are_finite(
        self, plugin: CreditAssigner, make_batch, returns: list[list[float]]
    ) -> None:
        batch = make_batch(one_turn_rows(plugin, returns))
        out = plugin.advantages(batch)
        assert torch.isfinite(out.advantages).all()
        assert (out.advantages[batch.completion_mask == 0] == 0).all()

    def test_equal_rewards_in_a_group_give_zero_advantage(self, plugin: CreditAssigner, make_batch) -> None:
        batch = make_batch(one_turn_rows(plugin, [[2.0, 2.0, 2.0]]), teacher_equals_old=True)
        assert torch.allclose(plugin.advantages(batch).advantages, torch.zeros(3, 6), atol=1e-6)

    def test_aux_loss_is_finite_and_differentiable(self, plugin: CreditAssigner, make_batch) -> None:
        batch = make_batch(multi_turn_rows(plugin))
        logprobs, logits = aux_inputs(plugin, batch)
        aux = plugin.aux_loss(batch, logprobs, logits)
        if not plugin.has_aux_loss:
            assert aux is None
            return
        assert aux is not None and aux.loss.dim() == 0 and torch.isfinite(aux.loss)
        aux.loss.backward()
        leaf = logits if plugin.needs_full_logits else logprobs
        assert leaf is not None and leaf.grad is not None
        assert torch.isfinite(leaf.grad).all()
        off = batch.completion_mask == 0
        assert (leaf.grad[off] == 0).all(), "masked-out tokens must get no gradient"
        assert leaf.grad[~off].abs().sum() > 0

    def test_non_finite_values_on_masked_tokens_do_not_leak(self, plugin: CreditAssigner, make_batch) -> None:
        batch = make_batch(multi_turn_rows(plugin))
        logprobs, logits = aux_inputs(plugin, batch)
        off = batch.completion_mask == 0
        assert batch.old_logprobs is not None and batch.teacher_logprobs is not None
        batch.old_logprobs[off] = float("nan")
        batch.teacher_logprobs[off] = float("-inf")
        for value in batch.aux_extras.values():
            value[off] = float("nan")
        assert torch.isfinite(plugin.advantages(batch).advantages).all()
        aux = plugin.aux_loss(batch, logprobs, logits)
        if aux is not None:
            assert torch.isfinite(aux.loss)
            aux.loss.backward()
            leaf = logits if plugin.needs_full_logits else logprobs
            assert leaf is not None and leaf.grad is not None and torch.isfinite(leaf.grad).all()

    def test_aux_loss_on_a_row_subset(self, plugin: CreditAssigner, make_batch) -> None:
        if not plugin.has_aux_loss:
            pytest.skip("plug-in has no auxiliary loss")
        batch = make_batch(multi_turn_rows(plugin))
        sub = batch.select([0, 2])
        logprobs, logits = aux_inputs(plugin, sub)
        aux = plugin.aux_loss(sub, logprobs, logits)
        assert aux is not None and torch.isfinite(aux.loss)

    def test_missing_required_field_is_named(self, plugin: CreditAssigner, make_batch) -> None:
        if not plugin.required_fields:
            pytest.skip("plug-in needs no optional field")
        missing = plugin.required_fields[0]
        batch = make_batch(multi_turn_rows(plugin), **{missing: None})
        with pytest.raises(ValueError, match=missing):
            plugin.advantages(batch)
        if plugin.has_aux_loss:
            logprobs, logits = aux_inputs(plugin, make_batch(multi_turn_rows(plugin)))
            with pytest.raises(ValueError, match=missing):
                plugin.aux_loss(batch, logprobs, logits)

    def test_unknown_parameter_lists_known_ones(self, plugin: CreditAssigner) -> None:
        with pytest.raises(ValueError, match="known parameters"):
            type(plugin)(not_a_parameter=1)

    def test_declares_needs(self, plugin: CreditAssigner) -> None:
        for flag in ("needs_old_logprobs", "needs_teacher_logprobs", "needs_full_logits", "needs_fixed_teacher",
                     "has_aux_loss", "own_invalid_penalty"):
            assert isinstance(getattr(plugin, flag), bool)
        inputs = {p.name for p in plugin.row_inputs}
        if plugin.needs_full_logits:  # the trainer fills aux_extras through the plug-in's own hook
            inputs |= set(plugin.extra_fields)
        assert set(plugin.required_fields) <= set(CreditBatch.__dataclass_fields__) | inputs
        for provider in plugin.row_inputs:  # each declared input is a typed provider with a documented need
            assert isinstance(provider, RowInput) and provider.kind in ("values", "tensor") and provider.requires
        assert plugin.roles and all(isinstance(r, str) and r for r in plugin.roles)
        assert plugin.primary_role == plugin.roles[0]
        if plugin.needs_teacher_logprobs or plugin.needs_full_logits:  # the trainer builds its teacher's context
            context = plugin.make_teacher_context(TeacherSettings("oracle"))
            assert isinstance(context, TeacherContext) and context.records_oracle in (True, False)
        known = {f.name for f in fields(plugin.config_cls)}
        assert set(plugin.trainer_defaults) <= known, "trainer_defaults must name config parameters"
        type(plugin)(**dict(plugin.trainer_defaults))  # the declared defaults are valid values

    def test_rows_of_an_undeclared_role_are_rejected(self, plugin: CreditAssigner, make_batch) -> None:
        rows = multi_turn_rows(plugin)
        rows[0]["role"] = "not_a_role"
        with pytest.raises(ValueError, match="not_a_role"):
            plugin.advantages(make_batch(rows))

    def test_env_factory_hook_returns_a_factory(self, plugin: CreditAssigner) -> None:
        from trainers.fake_env import make_letter_env

        make = plugin.wrap_env_factory(make_letter_env, "Letters-v0")
        env = make()
        try:
            _, info = env.reset(seed=0, options={"task_id": "t0"})
            assert isinstance(info, dict)
        finally:
            env.close()


def suite_plugin_classes() -> list[type[CreditAssigner]]:
    """Every concrete ``CreditAssigner`` subclass defined in a module of the suite's credit package
    or of its method packages (``agentgym_suite/methods/``; found by walking the packages, so a new
    plug-in module needs no edit here)."""
    import importlib
    import inspect
    import pkgutil

    import agentgym_suite.methods as methods
    import agentgym_suite.trainers.credit as package

    found: list[type[CreditAssigner]] = []
    for info in [*pkgutil.walk_packages(package.__path__, f"{package.__name__}."),
                 *pkgutil.walk_packages(methods.__path__, f"{methods.__name__}.")]:
        module = importlib.import_module(info.name)
        found += [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                  if issubclass(cls, CreditAssigner) and cls.__module__ == module.__name__ and not inspect.isabstract(cls)]
    return found


def test_the_registry_holds_every_plugin_of_the_package_by_its_own_name() -> None:
    classes = suite_plugin_classes()
    assert len(classes) >= 2, "the walk found the package's plug-ins"
    unregistered = sorted(f"{cls.__module__}:{cls.__name__}" for cls in classes if CREDIT_ASSIGNERS.get(cls.name) is not cls)
    assert not unregistered, (f"add {unregistered} to the tuple in trainers/credit/registry.py, or to the "
                              "ENTRY_POINTS of its method package")
    assert all(name == cls.name for name, cls in CREDIT_ASSIGNERS.items())
    assert len({cls.name for cls in classes}) == len(classes), "two plug-ins share a name"
    from agentgym_suite.trainers.credit.registry import DEFAULT_CREDIT

    assert NAMES[: len(CREDIT_ASSIGNERS)] == list(CREDIT_ASSIGNERS) and NAMES[0] == DEFAULT_CREDIT  # the default first


def test_unknown_name_lists_known_ones_and_the_import_path_form() -> None:
    with pytest.raises(ValueError, match="choose one of") as err:
        get_credit_assigner("ppo_magic")
    for name in NAMES:
        assert name in str(err.value)
    assert "import path" in str(err.value) and "my_pkg.my_credit:MyCredit" in str(err.value)


def test_a_plugin_is_found_by_its_import_path() -> None:
    for path in ("agentgym_suite.trainers.credit.grpo:DrGRPOCredit", "agentgym_suite.trainers.credit.grpo.DrGRPOCredit"):
        plugin = get_credit_assigner(path, invalid_penalty=0.0)
        assert type(plugin) is CREDIT_ASSIGNERS["dr_grpo"] and plugin.config.invalid_penalty == 0.0


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("no_such_module_xyz:Credit", "cannot import module 'no_such_module_xyz'"),
        ("agentgym_suite.trainers.credit.grpo:NoSuchCredit", "has no attribute 'NoSuchCredit'"),
        ("agentgym_suite.trainers.credit.grpo:row_scores", "not a subclass of"),
        ("agentgym_suite.trainers.credit.grpo:", "must name a module and a class"),
    ],
)
def test_bad_import_paths_say_what_is_wrong(path: str, fragment: str) -> None:
    with pytest.raises(ValueError) as err:
        get_credit_assigner(path)
    assert fragment in str(err.value)


def test_a_teacher_pass_without_a_teacher_context_is_refused_with_what_to_set() -> None:
    class NoContext(GRPOCredit):
        name = "no_context"
        needs_teacher_logprobs = True

    with pytest.raises(ValueError, match="teacher_context = PrivilegedTextTeacher"):
        NoContext.make_teacher_context(TeacherSettings("oracle"))
