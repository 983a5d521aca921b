"""FSDP asked for on CPU processes: FSDP2 is turned on (``agentgym_suite.trainers.fsdp2``), FSDP1 is
refused with what to do, and nothing changes where FSDP was not asked for or accelerate runs it.
The sharded training runs themselves are in ``test_engine_trainer.py``."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from accelerate.utils import DistributedType

from agentgym_suite.trainers import fsdp2


def _cpu_accelerator(kind: DistributedType = DistributedType.MULTI_CPU) -> SimpleNamespace:
    return SimpleNamespace(distributed_type=kind, device=torch.device("cpu"), num_processes=2)


def test_the_fsdp_version_comes_from_the_training_arguments_or_accelerate_launch(monkeypatch):
    monkeypatch.delenv("ACCELERATE_USE_FSDP", raising=False)
    assert fsdp2.fsdp_requested(SimpleNamespace(fsdp_plugin_args=None)) is None
    assert fsdp2.fsdp_requested(SimpleNamespace(fsdp_plugin_args={"fsdp_version": 2})) == 2
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    monkeypatch.setenv("FSDP_VERSION", "2")
    assert fsdp2.fsdp_requested(SimpleNamespace(fsdp_plugin_args=None)) == 2
    monkeypatch.setenv("FSDP_VERSION", "1")
    assert fsdp2.fsdp_requested(SimpleNamespace(fsdp_plugin_args=None)) == 1


def test_fsdp1_on_cpu_processes_is_refused_with_what_to_do(monkeypatch):
    # accelerate would leave FSDP off and every process would train its own copy
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    monkeypatch.setenv("FSDP_VERSION", "1")
    with pytest.raises(ValueError, match="fsdp_version: 2.*fsdp2_cpu.yaml.*DeepSpeed"):
        fsdp2.adopt_fsdp_on_cpu(_cpu_accelerator(), SimpleNamespace(fsdp_plugin_args=None))


def test_nothing_changes_without_fsdp_or_where_accelerate_runs_an_engine(monkeypatch):
    monkeypatch.delenv("ACCELERATE_USE_FSDP", raising=False)
    assert not fsdp2.adopt_fsdp_on_cpu(_cpu_accelerator(), SimpleNamespace(fsdp_plugin_args=None))
    asked = SimpleNamespace(fsdp_plugin_args={"fsdp_version": 1})
    for kind in (DistributedType.FSDP, DistributedType.DEEPSPEED):  # accelerate's own engine: left alone
        assert not fsdp2.adopt_fsdp_on_cpu(_cpu_accelerator(kind), asked)


def test_the_stand_in_accelerator_holds_the_gradient_sync_of_sharded_modules():
    class Module:
        sync = True

        def set_requires_gradient_sync(self, value: bool) -> None:
            self.sync = value

    modules = [Module(), Module()]
    accelerator = fsdp2.Fsdp2Accelerator(modules)
    accelerator.gradient_state._set_sync_gradients(False)
    assert not accelerator.sync_gradients
    with accelerator.no_sync(None):
        assert [m.sync for m in modules] == [False, False]
    assert [m.sync for m in modules] == [True, True]


def test_rows_per_update_is_refused_under_fsdp1_with_what_to_use():
    from agentgym_suite.trainers.verl_updates import check_update_setup

    with pytest.raises(ValueError, match="FSDP2.*fsdp.yaml.*ZeRO"):
        check_update_setup(fp16_scaler=False, fsdp_version=1)
    for version in (None, 2):
        check_update_setup(fp16_scaler=False, fsdp_version=version)
