"""Answer tool calls from a sample's recordings.

A call is answered with the recorded output of a recorded call with the same name and the
same arguments (compared as canonical JSON, strings stripped and case-folded). Calls with no
recording go to ``unmatched_call_handler(name, arguments, sample)`` when one is set (a world
model can answer them), else they get an error result.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from agentgym_suite.envs.finmcp.dataset import RecordedCall, Sample

UnmatchedCallHandler = Callable[[str, dict[str, Any], Sample], Any]


def _canonical(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().casefold()
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def call_key(name: str, arguments: dict[str, Any]) -> str:
    """Canonical key of a call for matching against recordings."""
    return name + json.dumps(_canonical(arguments), sort_keys=True, ensure_ascii=False)


def decode_output(output: str) -> Any:
    """A recorded output as the tool returned it: parsed JSON, or the text when it is not JSON."""
    try:
        return json.loads(output)
    except (json.JSONDecodeError, TypeError):
        return output


class Replayer:
    """Recorded outputs of one sample, looked up by call."""

    def __init__(self, sample: Sample, unmatched_call_handler: UnmatchedCallHandler | None = None) -> None:
        self.sample = sample
        self.unmatched_call_handler = unmatched_call_handler
        self._records: dict[str, RecordedCall] = {}
        for call in sample.recorded_calls:
            self._records.setdefault(call_key(call.name, call.arguments), call)
        self.matched = 0
        self.unmatched = 0

    def answer(self, name: str, arguments: dict[str, Any]) -> Any:
        """The recorded output for this call, the handler's answer, or an error result."""
        record = self._records.get(call_key(name, arguments))
        if record is not None:
            self.matched += 1
            return decode_output(record.output)
        self.unmatched += 1
        if self.unmatched_call_handler is not None:
            return self.unmatched_call_handler(name, arguments, self.sample)
        return {"error": f"no recorded output for {name} with these arguments; this offline replay only answers the calls recorded for the task"}
