"""τ²-bench's tools as its models see them: schemas built from upstream's tool sources equal upstream's.

``tau2/tool_schemas.json`` holds, per domain and side, the SHA-256 of every tool's ``Tool.openai_schema`` as
upstream builds it (``tau2/regenerate_tool_schemas.py``), and two schema layouts with the descriptions blanked.
The hash test needs upstream's tool sources, which ``agentgym data fetch tau2`` places next to the domains' data;
it looks in ``$AGENTGYM_DATA/tau2`` and in the default data cache, and skips (saying so) when neither has them.
The other tests always run: they build schemas from tools sources written here, in this suite's own words, with
the structure of two upstream tools, and compare the layout with upstream's, and check that ``Tau2-v0`` shows the
built schemas (and names the departure without them).
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from agentgym_suite.core.data import data_dir
from agentgym_suite.envs.tau2.data_source import TOOL_SOURCES
from agentgym_suite.envs.tau2.banking.agent_tools import RETRIEVAL_TOOLS
from agentgym_suite.envs.tau2.tool_source import DESCRIPTIONS_DEPARTURE, OTHER_SIDES_CLASSES, schemas_from_files, source_paths
from agentgym_suite.envs.tau2.toolkit import DomainTools
from tests.conformance.tau2.schema_hash import blank_descriptions, canonical_hash

RECORD = json.loads((Path(__file__).parent / "tau2" / "tool_schemas.json").read_text(encoding="utf-8"))


def _candidate_roots() -> list[Path]:
    default = Path(platformdirs.user_cache_dir("agentgym-suite")) / "data"
    return list(dict.fromkeys([data_dir() / "tau2", default / "tau2"]))


def _sources(domain: str, side: str) -> list[Path]:
    for root in _candidate_roots():
        found = source_paths(root / "domains" / domain, side)
        if found is not None:
            return found
    pytest.skip(f"upstream's {domain} {side} tool sources ({', '.join(TOOL_SOURCES[(domain, side)])}) are in none of "
                f"{', '.join(str(r / 'domains' / domain) for r in _candidate_roots())}: run `agentgym data fetch tau2` "
                "to place them")


SIDES = [(domain, side) for domain, sides in RECORD["tools"].items() for side, tools in sides.items() if tools]


def test_every_recorded_side_has_declared_sources() -> None:
    assert sorted(SIDES) == sorted(TOOL_SOURCES)


@pytest.mark.parametrize(("domain", "side"), SIDES, ids=[f"{d}-{s}" for d, s in SIDES])
def test_schemas_from_upstream_sources_equal_upstream(domain: str, side: str) -> None:
    built = schemas_from_files(_sources(domain, side), OTHER_SIDES_CLASSES.get((domain, side), frozenset()))
    expected = RECORD["tools"][domain][side]
    names = [s["function"]["name"] for s in built]
    if domain == "banking_knowledge" and side == "agent":  # the retrieval file holds every configuration's tools
        mixins = {t["function"]["name"] for t in schemas_from_files(_sources(domain, side)[:1])}
        assert set(names) - set(expected) <= mixins
        names = [name for name in names if name in expected]
    assert names == list(expected)  # upstream's tools, in upstream's order
    mismatched = [s["function"]["name"] for s in built
                  if s["function"]["name"] in expected and canonical_hash(s) != expected[s["function"]["name"]]]
    assert mismatched == []


@pytest.mark.parametrize(("domain", "side"), SIDES, ids=[f"{d}-{s}" for d, s in SIDES])
def test_recorded_tools_are_the_suites_tools(domain: str, side: str) -> None:
    from agentgym_suite.envs.tau2.world import AGENT_TOOLKITS, USER_TOOLKITS

    toolkit = (AGENT_TOOLKITS if side == "agent" else USER_TOOLKITS)[domain]
    ours = set(DomainTools._tool_methods.__func__(toolkit))  # type: ignore[attr-defined]  # every tool the class has
    recorded = set(RECORD["tools"][domain][side])
    assert recorded <= ours and ours - recorded <= set(RETRIEVAL_TOOLS)  # banking: other configurations' retrieval


# --- the builder on tools sources written here (own wording, the structure of two upstream tools) ----------------

BOOKING_MODELS = '''
from typing import List, Literal, Optional
from pydantic import BaseModel, Field

FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]


class FlightInfo(BaseModel):
    flight_number: str = Field(description="Code of one flight.")
    date: str = Field(description="Day of that flight.")


class Passenger(BaseModel):
    first_name: str = Field(description="Given name.")
    last_name: str = Field(description="Family name.")
    dob: str = Field(description="Birth day.")


class Payment(BaseModel):
    payment_id: str = Field(description="Which payment method pays.")
    amount: int = Field(description="How much it pays.")
'''

BOOKING_TOOLS = '''
from typing import List, Optional
from tau2.environment.toolkit import ToolKitBase, ToolType, is_tool


class Tools(ToolKitBase):
    def _helper(self, x: str) -> str:
        """Not a tool: no decorator."""

    @is_tool(ToolType.WRITE)
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: FlightType,
        cabin: CabinClass,
        flights: List[FlightInfo | dict],
        passengers: List[Passenger | dict],
        payment_methods: List[Payment | dict],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Insurance,
    ) -> Reservation:
        """
        Make a booking for a customer.

        Args:
            user_id: Whose booking.
            origin: Where from.
            destination: Where to.
            flight_type: One way or return.
            cabin: Which cabin.
            flights: Each flight of the trip.
            passengers: Who travels.
            payment_methods: How it is paid.
            total_baggages: All bags.
            nonfree_baggages: Bags that cost extra.
            insurance: With or without cover.

        Returns:
            Reservation: the booking made.
        """

    @is_tool(ToolType.READ)
    def look_up(self, code: str, limit: Optional[int] = None, verbose: bool = False, note=None) -> str:
        """Find one record.

        A second paragraph that explains more.

        Args:
            code (str): The record's code.
            limit: At most this many.
            note (str): Typed only here.

        Returns:
            The record.

        Raises:
            ValueError: when nothing matches.
        """

    @is_tool(ToolType.GENERIC)
    def undocumented(self, value: float) -> str:
        pass
'''

APN_MODELS = '''
from enum import Enum
from typing import Optional
from pydantic import Field
from tau2.utils.pydantic_utils import BaseModelNoExtra


class APNNames(str, Enum):
    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(BaseModelNoExtra):
    """One access point's settings."""

    apn_name: APNNames = Field(APNNames.INTERNET, description="Its name.")
    reset_at_reboot: bool = Field(False, description="Whether a reboot resets it.")
    mms_apn: Optional[str] = Field("mms", description="The MMS access point.")
    mmsc_url: Optional[str] = Field("http://mms.carrier.com/mms/wapenc", description="The MMS centre.")
    mms_proxy: Optional[str] = Field(None, description="The MMS proxy.")
    mms_port: Optional[int] = Field(None, description="The MMS proxy's port.")

    def helper(self) -> bool:
        return True
'''

APN_TOOLS = '''
from typing import Union


class PhoneTools(ToolKitBase):
    @is_tool(ToolType.WRITE)
    def set_apn_settings(self, apn_settings: Union[APNSettings, dict]) -> str:
        """Change the phone's access point."""
'''


def _write(folder: Path, **files: str) -> list[Path]:
    paths = []
    for name, text in files.items():
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        paths.append(path)
    return paths


def _layout(domain: str, side: str) -> dict[str, Any]:
    return next(entry["schema"] for entry in RECORD["layouts"] if (entry["domain"], entry["side"]) == (domain, side))


def test_booking_layout_is_upstreams(tmp_path: Path) -> None:
    tools, models = _write(tmp_path, tools=BOOKING_TOOLS, models=BOOKING_MODELS)
    built = {s["function"]["name"]: s for s in schemas_from_files([tools, models])}
    assert list(built) == ["book_reservation", "look_up", "undocumented"]  # decorated methods only, in order
    booking = built["book_reservation"]
    assert blank_descriptions(booking) == _layout("airline", "agent")
    function = booking["function"]
    assert function["description"] == "Make a booking for a customer."  # the Returns section stays out
    assert function["parameters"]["properties"]["flights"]["description"] == "Each flight of the trip."
    assert function["parameters"]["$defs"]["Payment"]["properties"]["amount"]["description"] == "How much it pays."


def test_docstring_sections_types_and_defaults(tmp_path: Path) -> None:
    tools, models = _write(tmp_path, tools=BOOKING_TOOLS, models=BOOKING_MODELS)
    built = {s["function"]["name"]: s["function"] for s in schemas_from_files([tools, models])}
    look_up = built["look_up"]
    assert look_up["description"] == "Find one record.\n\nA second paragraph that explains more."
    properties = look_up["parameters"]["properties"]
    assert properties["code"] == {"description": "The record's code.", "title": "Code", "type": "string"}
    assert properties["limit"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None,
                                   "description": "At most this many.", "title": "Limit"}
    assert properties["verbose"] == {"default": False, "title": "Verbose", "type": "boolean"}  # no Args line
    # no annotation: the docstring's type stands in (as upstream's Tool does)
    assert properties["note"] == {"default": None, "description": "Typed only here.", "title": "Note", "type": "string"}
    assert look_up["parameters"]["required"] == ["code"]
    # no docstring: the tool's name is its description
    assert built["undocumented"]["description"] == "undocumented"
    assert built["undocumented"]["parameters"]["properties"]["value"] == {"title": "Value", "type": "number"}


def test_apn_layout_is_upstreams(tmp_path: Path) -> None:
    tools, models = _write(tmp_path, tools=APN_TOOLS, models=APN_MODELS)
    (built,) = schemas_from_files([tools, models])
    assert blank_descriptions(built) == _layout("telecom", "user")
    settings = built["function"]["parameters"]["$defs"]["APNSettings"]
    assert settings["description"] == "One access point's settings."
    assert settings["properties"]["apn_name"]["default"] == "internet"


def test_unknown_names_are_refused_not_run(tmp_path: Path) -> None:
    from agentgym_suite.envs.tau2.tool_source import UnsupportedSource

    tools, = _write(tmp_path, tools='''
        class T:
            @is_tool(ToolType.READ)
            def f(self, x: __import__("os").system("echo hi")) -> str:
                """Doc."""
    ''')
    with pytest.raises(UnsupportedSource):
        schemas_from_files([tools])


# --- the env shows the built schemas, and names the departure without them ---------------------------------------

MOCK_TOOLS = '''
class MockTools(ToolKitBase):
    @is_tool(ToolType.WRITE)
    def create_task(self, user_id: str, title: str, description: str = None) -> Task:
        """Open a task for someone.

        Args:
            user_id: Whose task.
            title: Its title.
            description: Its details.
        """

    @is_tool(ToolType.READ)
    def get_users(self) -> list:
        """List everyone."""

    @is_tool(ToolType.WRITE)
    def update_task_status(self, task_id: str, status: TaskStatus) -> Task:
        """Move a task on."""

    @is_tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand over."""
'''

MOCK_USER_TOOLS = '''
class MockUserTools(ToolKitBase):
    @is_tool(ToolType.READ)
    def check_notifications(self) -> str:
        """Read the notifications."""

    @is_tool(ToolType.WRITE)
    def dismiss_notification(self, notification_id: str) -> str:
        """Clear one."""
'''


def _data_copy(tmp_path: Path, with_sources: bool) -> Path:
    shared = data_dir() / "tau2"
    if not (shared / "domains" / "mock" / "tasks.json").is_file():
        pytest.skip(f"τ²-bench's mock domain is not in {shared} (`agentgym data fetch tau2`)")
    root = tmp_path / "data"
    shutil.copytree(shared / "domains" / "mock", root / "tau2" / "domains" / "mock")
    shutil.copytree(shared / "user_simulator", root / "tau2" / "user_simulator")
    for name in TOOL_SOURCES[("mock", "agent")] + TOOL_SOURCES[("mock", "user")]:
        (root / "tau2" / "domains" / "mock" / name).unlink(missing_ok=True)
    if with_sources:
        folder = root / "tau2" / "domains" / "mock"
        (folder / "tools_source.py").write_text(textwrap.dedent(MOCK_TOOLS), encoding="utf-8")
        (folder / "data_model_source.py").write_text('TaskStatus = Literal["pending", "completed"]\n', encoding="utf-8")
        (folder / "user_tools_source.py").write_text(textwrap.dedent(MOCK_USER_TOOLS), encoding="utf-8")
    return root


@pytest.mark.parametrize("with_sources", [True, False])
def test_env_shows_built_schemas_or_names_the_departure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        with_sources: bool) -> None:
    from agentgym_suite.envs.tau2.env import Tau2Env

    monkeypatch.setenv("AGENTGYM_DATA", str(_data_copy(tmp_path, with_sources)))
    env = Tau2Env(domain="mock")
    _, info = env.reset(seed=0)
    shown = {t["function"]["name"]: t["function"] for t in info["tools"]}
    customer = {t["function"]["name"]: t["function"] for t in env._user_tool_schemas()}
    if with_sources:
        assert shown["create_task"]["description"] == "Open a task for someone."
        assert shown["update_task_status"]["parameters"]["properties"]["status"]["enum"] == ["pending", "completed"]
        assert customer["dismiss_notification"]["description"] == "Clear one."
        assert DESCRIPTIONS_DEPARTURE not in env.leaderboard_departures()
    else:
        assert shown["create_task"]["description"] != "Open a task for someone."
        assert DESCRIPTIONS_DEPARTURE in env.leaderboard_departures()
