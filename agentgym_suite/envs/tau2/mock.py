"""Mock domain of tau2: a tiny task tracker (users own tasks; tasks are pending or completed).

The user side holds a notification inbox (``user_db.json``); its functions are used by the
tasks' initialisation actions and environment assertions.
"""

from __future__ import annotations

from typing import Any

from agentgym_suite.envs.tau2.toolkit import GENERIC, STRING, WRITE, DomainTools, described, tool

TASK_STATUSES = ("pending", "completed")


class MockTools(DomainTools):
    """The mock agent's tools over a ``{"tasks", "users"}`` database."""

    domain = "mock"

    @tool("Create a task for an existing user; new tasks are pending.", tool_kind=WRITE, optional=("description",),
          user_id=described(STRING, "Owner's user id, e.g. 'user_1'."),
          title=described(STRING, "Task title (required, non-empty)."),
          description=described({"type": ["string", "null"]}, "Optional description."))
    def create_task(self, user_id: str, title: str, description: str | None = None) -> dict[str, Any]:
        if user_id not in self.db["users"]:
            raise ValueError(f"User {user_id} not found")
        if not title.strip():
            raise ValueError("Every task must have a title")
        task_id = f"task_{len(self.db['tasks']) + 1}"
        task = {"task_id": task_id, "title": title, "description": description, "status": "pending"}
        self.db["tasks"][task_id] = task
        self.db["users"][user_id].setdefault("tasks", []).append(task_id)
        return task

    @tool("List every user with their task ids.")
    def get_users(self) -> list[dict[str, Any]]:
        return list(self.db["users"].values())

    @tool("Set a task's status to 'pending' or 'completed'.", tool_kind=WRITE,
          task_id=described(STRING, "Task id, e.g. 'task_1'."),
          status=described({"type": "string", "enum": list(TASK_STATUSES)}, "New status."))
    def update_task_status(self, task_id: str, status: str) -> dict[str, Any]:
        task = self.db["tasks"].get(task_id)
        if task is None:
            raise ValueError(f"Task {task_id} not found")
        task["status"] = status
        return task

    @tool("Hand the user over to a human agent with a summary of the issue.", tool_kind=GENERIC,
          summary=described(STRING, "Summary of the user's issue."))
    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # ------------------------------------------------------------------ assertions (not tools)
    @staticmethod
    def assertion_fix(func_name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The tool call that makes a failing assertion hold (used by the oracle), if any."""
        if func_name == "assert_task_status":
            return "update_task_status", {"task_id": arguments["task_id"], "status": arguments["expected_status"]}
        return None

    def assert_task_status(self, task_id: str, expected_status: str) -> bool:
        """True when task ``task_id`` exists and has ``expected_status``."""
        task = self.db["tasks"].get(task_id)
        return task is not None and task["status"] == expected_status


class MockUserTools(DomainTools):
    """The mock user's device: a notification inbox."""

    domain = "mock"

    @tool("List the notifications in the inbox.")
    def check_notifications(self) -> list[dict[str, Any]]:
        return list(self.db.setdefault("notifications", {}).values())

    @tool("Mark a notification as read.", tool_kind=WRITE, notification_id=described(STRING, "Notification id, e.g. 'notif_1'."))
    def dismiss_notification(self, notification_id: str) -> dict[str, Any]:
        note = self.db.setdefault("notifications", {}).get(notification_id)
        if note is None:
            raise ValueError(f"Notification {notification_id} not found")
        note["status"] = "read"
        return note

    def add_notification(self, notification_id: str, message: str, task_id: str) -> dict[str, Any]:
        """Put an unread notification in the inbox (used by task initialisation)."""
        note = {"notification_id": notification_id, "message": message, "status": "unread", "task_id": task_id}
        self.db.setdefault("notifications", {})[notification_id] = note
        return note

    @staticmethod
    def assertion_fix(func_name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The user-side call that makes a failing assertion hold (used by the scripted user), if any."""
        if func_name == "assert_notification_status" and arguments.get("expected_status") == "read":
            return "dismiss_notification", {"notification_id": arguments["notification_id"]}
        return None

    def assert_notification_status(self, notification_id: str, expected_status: str) -> bool:
        """True when the notification exists and has ``expected_status``."""
        note = self.db.get("notifications", {}).get(notification_id)
        return note is not None and note["status"] == expected_status
