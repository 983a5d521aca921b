"""The authors' released skill texts, as data: ``agentgym data fetch skills``.

The privileged texts the SDAR, OPSD, GRPO+OPSD, RLSD, Skill-SD and AgentOPSD teachers read are
the files under ``skills/<env>/`` of ZJU-REAL/SDAR (ZethWang/AgentOPSD at ``0c478b2`` holds the
same blobs). They are downloaded from the pinned commit, each file checked against its sha256
and its git blob id, into ``$AGENTGYM_DATA/skills/{alfworld,search,webshop}/``; only the files
the released ``SkillProvider`` reads are fetched (``skill_mapping.json`` and the Markdown files
its ``skill_files`` table names). Envs reach them through ``TextEnv.skill_texts``.
"""

from __future__ import annotations

from agentgym_suite.core.data_sources import DataSource, RemoteFile
from agentgym_suite.core.skills import RELEASED_ROOT

UPSTREAM_REPO = "ZJU-REAL/SDAR"
UPSTREAM_COMMIT = "8b85c231df3b384131132f174f0cd893fb58b509"
RAW_BASE = f"https://raw.githubusercontent.com/{UPSTREAM_REPO}/{UPSTREAM_COMMIT}/skills/"

PINNED: tuple[tuple[str, str, str], ...] = (
    ("alfworld/skill_mapping.json", "5421080a2f251c267119fbbd91d0594c9de2a105d11f2c2b37b40582cf851604", "bd8b278f720e"),
    ("alfworld/general_skills.md", "d41d7a51347c9ba4626150b5c506089324eb0690cfd049b5aa484e136c4f10ce", "4d150413f7e1"),
    ("alfworld/pick_and_place.md", "da4ab3a48df67a38619cd87e28ced5d0c03228377478e23020a5a3ab9531a5c8", "3dffb510446b"),
    ("alfworld/look_at_obj_in_light.md", "1dd58fb6317c4b5702f7462e6455321b74b568bb02374189451158e3e1d0716b", "875e13bed442"),
    ("alfworld/clean.md", "9797feee0b55a995df6be980e9bbbb9186dc67f2003b7334b902713d670e2063", "3d2c776f4a1c"),
    ("alfworld/heat.md", "38a4d1bc3e67a0a0f7cc3ad4033b243542e25a19edf20b8b9d7b2f3f152c9ee8", "f4c3f01d8e75"),
    ("alfworld/cool.md", "23a7ee2ac5303665285e8017d52df087d24878dd48bad478b7d6554ab0b75219", "07b4f4b458ab"),
    ("search/skill_mapping.json", "77df674a8c48583a6ad35a09d647a79d999f5ee89e59d13069bda18516d8c93c", "2e64f084ccc0"),
    ("search/general_skills.md", "f66ee834dbf7818aa4d7b9f262c8d426ed0417ee0c048a4511196e171a34ab70", "f31baf36064b"),
    ("search/direct_retrieval.md", "ea5db508fde6ba0ed3b27d8e5e958a47cf22e5e4735f4aff17482c4072ebf3fb", "980286f050b6"),
    ("search/multi_hop_reasoning.md", "f66aeda3f2155365ef49d21c9db77015ece39f86722bddee03b11bfd7385d176", "dd1d122aab7b"),
    ("search/entity_attribute_lookup.md", "414f6b6dd2f027f3246b348be65f0eb09bd92c6ebbd610cba348a098c98a5940", "f483b42457e0"),
    ("search/compare.md", "a749e6bc77b2576fcf292828da68bc31cdf1217abef0485bf61932999b000109", "170891bb116e"),
    ("webshop/skill_mapping.json", "5e88f4f7621b19d64a5396d1e29afa8740ef157dc72980fe033c2c74c072730f", "99d6e6d3ac13"),
    ("webshop/general_skills.md", "83f5bfca6d1012cce6c703475556d854fa833f03ce6083fa9d3bcc9c10b5fc80", "3d2012e1d7ab"),
    ("webshop/apparel.md", "071f8bbcec3cb8e66c3a9fe5f9c6b821b0e1b9db0a14d4257c594fe66898ef7e", "9b6793162b23"),
    ("webshop/footwear.md", "aeb65d1a9acb173f62eaf5f14c42e24ff46aac8d8797c312a03000cc01300ac1", "1423fc9af9b4"),
    ("webshop/home_decor.md", "7919d5ce2b18aa7ea4a62a619b8e3b9ef94837b9a7fe78f062a0237607a225db", "2d5742e08c94"),
    ("webshop/electronics.md", "ab8464faa51932f79f5220f098876e5437e88df1c20d8bd3599ce3e2de84067c", "0e696c3a9538"),
    ("webshop/accessories.md", "3c30dfc2ce78b4aeaeba522f0ea8a53643c929bcbe9e24088d781eaef28c52fc", "fd207ab3c217"),
    ("webshop/beauty_health.md", "8125ecd30a53f06629711d974ada86ab05fd05e8c8d7b1f461263cc31f546974", "d391cef6fa11"),
    ("webshop/other.md", "1f3d5dc971753f3ec4b72b423f07f61769659671ca607d603c57d53b318fbbc6", "dd1d40fb71fb"),
)
"""``<env>/<file>``, sha256 and git blob prefix of every released file the teachers read, at :data:`UPSTREAM_COMMIT`."""


def skills_source(pinned: tuple[tuple[str, str, str], ...] = PINNED, base_url: str = RAW_BASE) -> DataSource:
    """The data source of ``pinned`` files downloaded from ``base_url`` (upstream's raw files at the
    pinned commit; a test passes files of its own and a local ``file://`` URL)."""
    return DataSource(
        RELEASED_ROOT,
        files=tuple(RemoteFile(base_url + rel, rel, git_blob=blob, sha256=sha) for rel, sha, blob in pinned),
        known_blobs={rel: blob for rel, _, blob in pinned},
        note=(f"The authors' skill texts for the self-distilling teachers ({UPSTREAM_REPO} at {UPSTREAM_COMMIT[:7]}, "
              "skills/<env>/): alfworld/, search/, webshop/."),
    )


SOURCE = skills_source()
"""Where the released skill texts come from; ``agentgym data fetch skills`` downloads them."""
