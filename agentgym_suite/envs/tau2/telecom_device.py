"""Telecom domain of tau2: the customer's simulated phone (the user's side).

The state is ``{"device": {...}, "surroundings": {...}}``: ``device`` holds the phone's
settings and connection (from ``user_db.toml``), ``surroundings`` what the phone cannot
change itself: where the customer is, the signal per network generation there, and the
account facts copied in by :mod:`.telecom_sync` (line active, roaming allowed, data
allowance used up, a pending payment request).

Radio changes (airplane mode, SIM, data, roaming, network mode, APN, reboot) trigger a
network search that recomputes the connection from the SIM, the mode preference, the local
signal, the APN and whether the line is active. Tools return what the customer would see,
mostly with the status bar appended; functions without a ``@tool`` mark break the phone for
a task's initial state or check it for the task's environment assertions.
"""

from __future__ import annotations

from typing import Any

from agentgym_suite.envs.tau2.record_models import APNSettings
from agentgym_suite.envs.tau2.telecom_sync import SyncedTools
from agentgym_suite.envs.tau2.toolkit import STRING, WRITE, described, tool

MODES = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
"""Network mode preferences, fastest first."""

CONNECTED, SEARCHING, NO_SERVICE = "connected", "searching", "no_service"
DEFAULT_APN = {"apn_name": "internet", "reset_at_reboot": False, "mms_apn": "mms",
               "mmsc_url": "http://mms.carrier.com/mms/wapenc", "mms_proxy": None, "mms_port": None}
DEFAULT_SIGNAL = {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}
DEFAULT_SURROUNDINGS = {"name": None, "phone_number": None, "is_abroad": False, "roaming_allowed": False,
                        "mobile_data_usage_exceeded": False, "line_active": True, "payment_request": None}
DEFAULT_VPN = {"server_address": "192.168.1.1", "protocol": "OpenVPN", "server_performance": "excellent"}

SPEED_RANGE_MBPS = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0)}
SIGNAL_FACTOR = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0}
SPEED_BANDS = ((1.0, "Very Poor"), (5.0, "Poor"), (25.0, "Fair"), (100.0, "Good"))
SPEED_ADVICE = {
    "Very Poor": "Even basic browsing will struggle.",
    "Poor": "Browsing is slow and streaming will stall.",
    "Fair": "Fine for browsing and standard-definition video.",
    "Good": "Fine for most uses, HD streaming included.",
    "Excellent": "The connection is very fast.",
}
SIGNAL_ICON = {"none": "📵 No Signal", "poor": "📶¹ Poor", "fair": "📶² Fair", "good": "📶³ Good",
               "excellent": "📶⁴ Excellent"}
"""The phone's signal indicator as τ²-bench's phone shows it (the status bar is part of what the customer reads)."""

_APP = described(STRING, "App name as listed by check_installed_apps, e.g. 'messaging'.")


class TelecomUserTools(SyncedTools):
    """The customer's phone: what they can check and change on it, as tools."""

    domain = "telecom"

    def __init__(self, db: dict[str, Any]) -> None:
        super().__init__(db)
        device = db.setdefault("device", {})
        apn = device.setdefault("active_apn_settings", {})
        for key, value in DEFAULT_APN.items():
            apn.setdefault(key, value)
        device.setdefault("wifi_ssid", None)
        device.setdefault("vpn_details", None)
        device.setdefault("app_statuses", {})
        around = db.setdefault("surroundings", {})
        for key, value in DEFAULT_SURROUNDINGS.items():
            around.setdefault(key, value)
        around.setdefault("signal_strength", dict(DEFAULT_SIGNAL))

    @property
    def device(self) -> dict[str, Any]:
        """The phone's settings and connection state (live)."""
        return self.db["device"]

    @property
    def surroundings(self) -> dict[str, Any]:
        """The customer's location and account facts (live)."""
        return self.db["surroundings"]

    # ------------------------------------------------------------------ derived state
    def sim_status(self) -> str:
        """``missing``, ``active``, ``locked_pin`` or ``locked_puk``."""
        return "missing" if self.device["sim_card_missing"] else self.device["sim_card_status"]

    def mobile_data_working(self) -> bool:
        """True when the phone can use mobile data right now."""
        dev, around = self.device, self.surroundings
        if dev["airplane_mode"] or dev["network_signal_strength"] == "none" or dev["network_connection_status"] == NO_SERVICE:
            return False
        if around["is_abroad"] and not (dev["roaming_enabled"] and around["roaming_allowed"]):
            return False
        return bool(dev["data_enabled"]) and not around["mobile_data_usage_exceeded"]

    def speed(self) -> tuple[float | None, str]:
        """(download Mbit/s, band) of a speed test; (None, 'No Connection') without mobile data."""
        if not self.mobile_data_working():
            return None, "No Connection"
        dev = self.device
        factor = 1.0
        vpn = dev.get("vpn_details") or {}
        if dev["vpn_connected"] and vpn.get("server_performance") == "poor":
            factor = 0.1
        if dev["data_saver_mode"]:
            factor *= 0.2
        low, high = SPEED_RANGE_MBPS.get(dev["network_technology_connected"], (0.0, 0.0))
        mbps = round((low + high) / 2.0 * SIGNAL_FACTOR.get(dev["network_signal_strength"], 0.0) * factor, 2)
        band = next((name for limit, name in SPEED_BANDS if mbps < limit), "Excellent")
        return mbps, band

    def mms_works(self) -> bool:
        """True when the messaging app can send a picture message."""
        dev = self.device
        if not self.mobile_data_working() or dev["network_technology_connected"] == "2G":
            return False
        if dev["wifi_calling_enabled"] and dev["wifi_calling_mms_over_wifi"]:
            return False  # the carrier does not carry MMS over Wi-Fi calling
        if self._apn("mmsc_url") is None:
            return False
        perms = (dev["app_statuses"].get("messaging") or {}).get("permissions") or {}
        return bool(perms.get("sms")) and bool(perms.get("storage"))

    def status_bar(self) -> str:
        """The icons along the top of the screen, as τ²-bench's phone writes them."""
        dev = self.device
        parts = []
        if dev["airplane_mode"]:
            parts.append("✈️ Airplane Mode")
        else:
            parts.append(SIGNAL_ICON.get(dev["network_signal_strength"], "📵 No Signal"))
            has_network = dev["network_technology_connected"] != "none"
            if has_network:
                parts.append(dev["network_technology_connected"])
            if dev["data_enabled"] and has_network:
                parts.append("📱 Data Enabled")
                if dev["data_saver_mode"]:
                    parts.append("🔽 Data Saver")
            else:
                parts.append("📵 Data Disabled")
        if dev["wifi_enabled"] and dev["wifi_connected"]:
            parts.append(f"📡 Connected to {dev['wifi_ssid']}" if dev.get("wifi_ssid") else "📡 Enabled")
        if dev["vpn_connected"]:
            parts.append("🔒 VPN Connected")
        parts.append(f"🔋 {dev['battery_level']}%")
        return " | ".join(parts)

    def _with_bar(self, text: str) -> str:
        return f"{text}\nStatus Bar: {self.status_bar()}"

    def simulate_network_search(self) -> str:
        """Recompute the cellular connection from the SIM, mode, local signal, airplane mode, APN and line."""
        dev, around = self.device, self.surroundings
        if self.sim_status() == "active":
            signal = around["signal_strength"]
            mode = dev["network_mode_preference"]
            if mode == "4g_5g_preferred":
                tech = "5G" if signal.get("5G", "none") != "none" else "4G"
            else:
                tech = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}.get(mode, "4G") if isinstance(mode, str) else "4G"
            dev.update(network_connection_status=CONNECTED, network_technology_connected=tech,
                       network_signal_strength=signal.get(tech, "none"))
        else:
            self._no_service()
        if dev["airplane_mode"]:  # each condition read on its own, as upstream's (an unreadable APN fails here)
            self._no_service()
        if self._apn("apn_name") == "broken":
            self._no_service()
        if not around["line_active"]:
            self._no_service()
        return f"Network search done: {dev['network_connection_status']}"

    def _apn(self, name: str) -> Any:
        """A field of the active APN settings. After ``set_apn_settings`` was given something that is not an object,
        upstream keeps that value as the settings, and every later read of a field fails with Python's
        ``AttributeError`` (``'str' object has no attribute 'apn_name'``); this reads the same way."""
        apn = self.device["active_apn_settings"]
        return apn.get(name) if isinstance(apn, dict) else getattr(apn, name)

    def _set_apn(self, name: str, value: Any) -> None:
        """Change a field of the active APN settings (``AttributeError`` on an unreadable APN, as :meth:`_apn`)."""
        apn = self.device["active_apn_settings"]
        if isinstance(apn, dict):
            apn[name] = value
        else:
            setattr(apn, name, value)

    def _no_service(self) -> None:
        self.device.update(network_connection_status=NO_SERVICE, network_technology_connected="none", network_signal_strength="none")

    def _wifi_down(self) -> None:
        self.device.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")

    # ------------------------------------------------------------------ status tools
    @tool("Show the icons in the phone's status bar: signal, network type, mobile data, Wi-Fi, VPN and battery.")
    def check_status_bar(self) -> str:
        return f"Status Bar: {self.status_bar()}"

    @tool("Show the phone's connection details: airplane mode, SIM, cellular status, signal, network type, "
          "mobile data, data roaming and Wi-Fi.")
    def check_network_status(self) -> str:
        dev = self.device
        lines = [
            f"Airplane Mode: {'ON' if dev['airplane_mode'] else 'OFF'}",
            f"SIM Card Status: {self.sim_status()}",
            f"Cellular Connection: {dev['network_connection_status']}",
            f"Cellular Signal: {dev['network_signal_strength']}",
            f"Cellular Network Type: {dev['network_technology_connected']}",
            f"Mobile Data Enabled: {'Yes' if dev['data_enabled'] else 'No'}",
            f"Data Roaming Enabled: {'Yes' if dev['roaming_enabled'] else 'No'}",
            f"Wi-Fi Radio: {'ON' if dev['wifi_enabled'] else 'OFF'}",
            f"Wi-Fi Connected: {'Yes' if dev['wifi_connected'] else 'No'}",
        ]
        if dev["wifi_connected"]:
            lines.append(f"Connected Wi-Fi Network: {dev.get('wifi_ssid')}")
        return "\n".join(lines)

    @tool("Show which cellular network generation the phone prefers.")
    def check_network_mode_preference(self) -> str:
        return f"Network Mode Preference: {self.device['network_mode_preference']}"

    @tool("Measure the phone's current mobile download speed.")
    def run_speed_test(self) -> str:
        mbps, band = self.speed()
        if mbps is None:
            return f"Speed test failed: {band}."
        return f"Speed Test Result: {mbps:.2f} Mbps ({band}). {SPEED_ADVICE[band]}"

    @tool("Show whether the SIM card is present, active, or locked with a PIN or PUK.")
    def check_sim_status(self) -> str:
        return {"active": "Your SIM card is active and working.", "missing": "No SIM card detected in the phone.",
                "locked_pin": "The SIM card is locked with a PIN code.",
                "locked_puk": "The SIM card is locked with a PUK code."}.get(self.sim_status(), f"Unknown SIM status: {self.sim_status()}")

    @tool("Show whether Data Saver mode is on.")
    def check_data_restriction_status(self) -> str:
        return "Data Saver mode is ON (limits data usage)." if self.device["data_saver_mode"] else "Data Saver mode is OFF."

    @tool("Show the APN name and the MMSC address (used for picture messages) the phone uses.")
    def check_apn_settings(self) -> str:
        if not isinstance(self.device["active_apn_settings"], dict):
            self._apn("model_copy")  # upstream copies the settings first, and an unreadable APN fails on that
        return (f"Current APN Name: {self._apn('apn_name') or 'Not Set'}\nMMSC URL (for picture messages): "
                f"{self._apn('mmsc_url') or 'Not Set'}\n(These are technical settings, usually best left unchanged.)")

    @tool("Show whether Wi-Fi is on, which network it is connected to and the signal.")
    def check_wifi_status(self) -> str:
        dev = self.device
        if not dev["wifi_enabled"]:
            return "Wi-Fi is turned OFF."
        if dev["wifi_connected"]:
            return f"Wi-Fi is ON and connected to '{dev.get('wifi_ssid')}'. Signal strength: {dev['wifi_signal_strength']}."
        return "Wi-Fi is ON but not connected to any network."

    @tool("Show whether Wi-Fi Calling is on.")
    def check_wifi_calling_status(self) -> str:
        return f"Wi-Fi Calling is currently turned {'ON' if self.device['wifi_calling_enabled'] else 'OFF'}."

    @tool("Show whether a VPN is connected, with its details.")
    def check_vpn_status(self) -> str:
        dev = self.device
        if dev["vpn_connected"]:
            details = dev.get("vpn_details")
            return f"VPN is ON and connected. Details: {details}" if details else "VPN is ON and connected (no specific details available)."
        if dev["vpn_enabled_setting"]:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @tool("List the apps installed on the phone.")
    def check_installed_apps(self) -> str:
        return f"The following apps are installed on the phone: {', '.join(self.device['app_statuses'])}"

    @tool("Show an app's granted permissions.", app_name=_APP)
    def check_app_status(self, app_name: str) -> str:
        if not self.device["app_statuses"].get(app_name):  # upstream answers (not an error result)
            return f"App '{app_name}' not found on this phone."
        granted = self._granted(app_name)
        if not granted:
            return f"Status for App: {app_name}\n - Permissions: None granted."
        return "\n".join([f"Status for App: {app_name}", " - Permissions Granted:"] + [f"   - {p}" for p in granted])

    @tool("Show which permissions (sms, storage, phone, network) an app has.", app_name=_APP)
    def check_app_permissions(self, app_name: str) -> str:
        if not self.device["app_statuses"].get(app_name):  # upstream answers (not an error result)
            return f"App '{app_name}' not found on this phone."
        granted = self._granted(app_name)
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    @tool("Check whether the messaging app can send MMS (picture) messages.")
    def can_send_mms(self) -> str:
        return "Your messaging app can send MMS messages." if self.mms_works() else "Your messaging app cannot send MMS messages."

    @tool("Check whether the agent has sent a payment request to this phone.")
    def check_payment_request(self) -> str:
        request = self.surroundings.get("payment_request")
        if request is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {request['bill_id']} of {request['amount_due']} USD."

    def _app(self, app_name: str) -> dict[str, Any]:
        app = self.device["app_statuses"].get(app_name)
        if app is None:
            raise ValueError(f"App '{app_name}' not found on this phone; installed: {', '.join(self.device['app_statuses'])}")
        return app

    def _granted(self, app_name: str) -> list[str]:
        return [name for name, allowed in (self._app(app_name).get("permissions") or {}).items() if allowed]

    # ------------------------------------------------------------------ setting tools
    @tool("Choose the preferred cellular network generation; the phone then searches for a network.", tool_kind=WRITE,
          mode=described({"type": "string", "enum": list(MODES)}, "One of " + ", ".join(MODES) + "."))
    def set_network_mode_preference(self, mode: str) -> str:
        if isinstance(mode, str) and mode not in MODES:  # upstream answers (not an error result) and changes nothing
            return self._with_bar(f"Failed to set network mode: '{mode}' is not a valid option. "
                                  f"Please use one of: {', '.join(MODES)}")
        # upstream stores any non-string value as given, searches (its fallback: 4G), then reads the mode's enum
        # ``value``, which a JSON value lacks: that AttributeError is the customer's answer, the phone keeps the search
        self.device["network_mode_preference"] = mode
        self.simulate_network_search()
        return self._with_bar(f"Preferred Network Mode set to: {mode if isinstance(mode, str) else mode.value}")

    @tool("Turn Airplane Mode on or off. On, it cuts cellular, Wi-Fi and Bluetooth.", tool_kind=WRITE)
    def toggle_airplane_mode(self) -> str:
        dev = self.device
        dev["airplane_mode"] = not dev["airplane_mode"]
        if dev["airplane_mode"]:
            self._wifi_down()
            self._drop_vpn()
        else:
            dev["network_connection_status"] = SEARCHING
            if dev["wifi_enabled"]:
                self._wifi_down()
        self.simulate_network_search()
        return self._with_bar(f"Airplane Mode is now {'ON' if dev['airplane_mode'] else 'OFF'}.")

    @tool("Take the SIM card out and put it back in, which can fix a SIM that is not recognised.", tool_kind=WRITE)
    def reseat_sim_card(self) -> str:
        self.device["sim_card_missing"] = False
        self.simulate_network_search()
        return self._with_bar("SIM card re-seated successfully.")

    @tool("Turn mobile data on or off.", tool_kind=WRITE)
    def toggle_data(self) -> str:
        self.device["data_enabled"] = not self.device["data_enabled"]
        self.simulate_network_search()
        return self._with_bar(f"Mobile Data is now {'ON' if self.device['data_enabled'] else 'OFF'}.")

    @tool("Turn data roaming on or off (needed for mobile data abroad).", tool_kind=WRITE)
    def toggle_roaming(self) -> str:
        self.device["roaming_enabled"] = not self.device["roaming_enabled"]
        self.simulate_network_search()
        return self._with_bar(f"Data Roaming is now {'ON' if self.device['roaming_enabled'] else 'OFF'}.")

    @tool("Turn Data Saver mode on or off; on, it limits data use and slows data down.", tool_kind=WRITE)
    def toggle_data_saver_mode(self) -> str:
        self.device["data_saver_mode"] = not self.device["data_saver_mode"]
        return self._with_bar(f"Data Saver Mode is now {'ON' if self.device['data_saver_mode'] else 'OFF'}.")

    @tool("Replace the phone's APN settings (apn_name, mms_apn, mmsc_url, mms_proxy, mms_port).", tool_kind=WRITE,
          apn_settings=described({"type": "object"}, "APN fields to use, e.g. {\"apn_name\": \"internet\", \"mmsc_url\": \"http://...\"}."))
    def set_apn_settings(self, apn_settings: dict[str, Any]) -> str:
        if not isinstance(apn_settings, dict):  # upstream stores it as given, then reads its apn_name (which it lacks)
            self.device["active_apn_settings"] = apn_settings
            return str(apn_settings.apn_name)  # type: ignore[attr-defined] # raises AttributeError, as upstream's
        # built as upstream builds its record: pydantic refuses unknown fields and values it cannot convert, in its words
        self.device["active_apn_settings"] = APNSettings(**apn_settings).model_dump(mode="json")
        self.simulate_network_search()
        return self._with_bar(f"APN settings set to: {self.device['active_apn_settings']['apn_name']}")

    @tool("Restore the default APN settings; they take effect at the next reboot.", tool_kind=WRITE)
    def reset_apn_settings(self) -> str:
        self._set_apn("reset_at_reboot", True)
        self.simulate_network_search()
        return self._with_bar("APN settings will reset at reboot.")

    @tool("Turn the Wi-Fi radio on or off (not possible in Airplane Mode).", tool_kind=WRITE)
    def toggle_wifi(self) -> str:
        dev = self.device
        if dev["airplane_mode"]:
            return self._with_bar("Cannot change Wi-Fi settings while Airplane Mode is ON.")
        dev["wifi_enabled"] = not dev["wifi_enabled"]
        if not dev["wifi_enabled"]:
            self._wifi_down()
        return self._with_bar(f"Wi-Fi is now {'ON' if dev['wifi_enabled'] else 'OFF'}.")

    @tool("Turn Wi-Fi Calling on or off (calls over Wi-Fi instead of the cellular network).", tool_kind=WRITE)
    def toggle_wifi_calling(self) -> str:
        self.device["wifi_calling_enabled"] = not self.device["wifi_calling_enabled"]
        return self._with_bar(f"Wi-Fi Calling is now {'ON' if self.device['wifi_calling_enabled'] else 'OFF'}.")

    @tool("Connect the configured VPN.", tool_kind=WRITE)
    def connect_vpn(self) -> str:
        if self.device["vpn_connected"]:
            return "VPN already connected."
        self.device.update(vpn_connected=True, vpn_details=dict(DEFAULT_VPN))
        return self._with_bar("VPN connected successfully.")

    @tool("Disconnect the active VPN, if any.", tool_kind=WRITE)
    def disconnect_vpn(self) -> str:
        done = self._drop_vpn()
        return self._with_bar("VPN disconnected successfully." if done else "No active VPN connection to disconnect.")

    def _drop_vpn(self) -> bool:
        if not self.device["vpn_connected"]:
            return False
        self.device.update(vpn_connected=False, vpn_details=None)
        return True

    @tool("Allow an app one permission: sms, storage, phone or network.", tool_kind=WRITE, app_name=_APP,
          permission=described(STRING, "Permission in lower case, e.g. 'storage'."))
    def grant_app_permission(self, app_name: str, permission: str) -> str:
        app = self.device["app_statuses"].get(app_name)  # as upstream: a refusal is an answer, not an error result
        permission = permission.lower()
        if not app:
            ok, message = False, f"App '{app_name}' not found. Cannot grant permission."
        else:
            perms = app.setdefault("permissions", {})
            if permission not in perms:
                ok, message = False, f"Permission '{permission}' not tracked for app '{app_name}', available permissions: {list(perms)}"
            else:
                perms[permission] = True
                ok, message = True, f"Permission '{permission}' granted to app '{app_name}'."
        return self._with_bar(("Success. " if ok else "Error. ") + message)

    @tool("Restart the phone; pending APN resets apply and the phone searches for a network again.", tool_kind=WRITE)
    def reboot_device(self) -> str:
        lines = []
        if self._apn("reset_at_reboot"):
            lines.append("Resetting APN settings...")
            self.device["active_apn_settings"] = dict(DEFAULT_APN)
        lines.append("Restarting network services...")
        self.device["network_connection_status"] = SEARCHING
        self.simulate_network_search()
        return self._with_bar("\n".join(lines))

    @tool("Pay the bill of the payment request the agent sent to this phone.", tool_kind=WRITE)
    def make_payment(self) -> str:
        request = self.surroundings.get("payment_request")
        if request is None:  # an answer, not an error, as upstream's phone gives it
            return "You do not have a payment request."
        request["paid"] = True
        return f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."

    # ------------------------------------------------------------------ task set-up (not tools)
    def set_user_info(self, name: str, phone_number: str) -> str:
        """Record who owns the phone and its number (links the phone to the account)."""
        self.surroundings.update(name=name, phone_number=phone_number)
        return f"User set to {name} ({phone_number})"

    def set_user_location(self, abroad: bool) -> str:
        """Put the customer abroad or at home."""
        self.surroundings["is_abroad"] = bool(abroad)
        return f"User is {'abroad' if abroad else 'at home'}"

    # The turn_* set-up helpers flip the switch, and flip it again when it landed the wrong way, as
    # upstream's do: a switch already in place is flipped twice, with the side effects of both flips
    # (a network search, Wi-Fi dropped), which the task's starting state depends on.
    def turn_airplane_mode_on(self) -> str:
        """Switch Airplane Mode on (flipped twice when it already is, as upstream)."""
        self.toggle_airplane_mode()
        if not self.device["airplane_mode"]:
            self.toggle_airplane_mode()
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        """Switch Airplane Mode off (flipped twice when it already is, as upstream)."""
        self.toggle_airplane_mode()
        if self.device["airplane_mode"]:
            self.toggle_airplane_mode()
        return "Airplane Mode is now OFF."

    def unseat_sim_card(self) -> str:
        """Take the SIM out (fixed by ``reseat_sim_card``)."""
        self.device["sim_card_missing"] = True
        self.simulate_network_search()
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode: str) -> str:
        """Lock the SIM with its PIN or PUK (no tool can fix this)."""
        if mode not in ("pin", "puk"):
            raise ValueError("mode must be 'pin' or 'puk'")
        self.device["sim_card_status"] = f"locked_{mode}"
        self.simulate_network_search()
        return f"SIM card locked successfully in {mode} mode."

    def turn_data_on(self) -> str:
        """Switch mobile data on."""
        self.device["data_enabled"] = True
        return "Data connection restored."

    def turn_data_off(self) -> str:
        """Switch mobile data off (flipped twice when it already is, as upstream)."""
        self.toggle_data()
        if self.device["data_enabled"]:
            self.toggle_data()
        return "Data connection broken."

    def turn_roaming_on(self) -> str:
        """Switch data roaming on (flipped twice when it already is, as upstream)."""
        self.toggle_roaming()
        if not self.device["roaming_enabled"]:
            self.toggle_roaming()
        return "Data Roaming is now ON."

    def turn_roaming_off(self) -> str:
        """Switch data roaming off (flipped twice when it already is, as upstream)."""
        self.toggle_roaming()
        if self.device["roaming_enabled"]:
            self.toggle_roaming()
        return "Data Roaming is now OFF."

    def turn_data_saver_mode_on(self) -> str:
        """Switch Data Saver on."""
        self.device["data_saver_mode"] = True
        return "Data Saver Mode is now ON."

    def turn_data_saver_mode_off(self) -> str:
        """Switch Data Saver off."""
        self.device["data_saver_mode"] = False
        return "Data Saver Mode is now OFF."

    def break_apn_settings(self) -> str:
        """Corrupt the APN so there is no service (fixed by ``reset_apn_settings`` and a reboot)."""
        self._set_apn("apn_name", "broken")
        self.simulate_network_search()
        return "APN settings broken."

    def break_apn_mms_setting(self) -> str:
        """Clear the MMSC address so MMS fails (fixed by ``reset_apn_settings`` and a reboot)."""
        self._set_apn("mmsc_url", None)
        return "APN MMS setting broken."

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> str:
        """Set Wi-Fi Calling and, when given, MMS over Wi-Fi."""
        self.device["wifi_calling_enabled"] = bool(enabled)
        if mms_over_wifi is not None:
            self.device["wifi_calling_mms_over_wifi"] = bool(mms_over_wifi)
        return f"Wi-Fi Calling is now {'ON' if enabled else 'OFF'}."

    def break_vpn(self) -> str:
        """Connect a VPN whose server is slow (mobile data becomes slow)."""
        if not self.device["vpn_connected"]:
            self.device.update(vpn_connected=True, vpn_details=dict(DEFAULT_VPN))
        self.device["vpn_details"]["server_performance"] = "poor"
        return "VPN connection broken."

    def remove_app_permission(self, app_name: str, permission: str) -> str:
        """Withdraw one permission from an app."""
        perms = self._app(app_name).setdefault("permissions", {})
        permission = permission.lower()
        if permission not in perms:
            raise ValueError(f"Permission '{permission}' is not tracked for app '{app_name}'")
        perms[permission] = False
        return f"Permission '{permission}' removed from app '{app_name}'."

    # ------------------------------------------------------------------ assertions (not tools)
    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        """True when Airplane Mode is ``expected_status``."""
        return self.device["airplane_mode"] == expected_status

    def assert_service_status(self, expected_status: str) -> bool:
        """True when the cellular connection status is ``expected_status`` (e.g. 'connected')."""
        return self.device["network_connection_status"] == expected_status

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        """True when mobile data working is ``expected_status``."""
        return self.mobile_data_working() == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        """True when the phone's data roaming setting is ``expected_status``."""
        return self.device["roaming_enabled"] == expected_status

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        """True when Data Saver is ``expected_status``."""
        return self.device["data_saver_mode"] == expected_status

    def assert_internet_speed(self, expected_speed: float, expected_desc: str | None = None) -> bool:
        """True when a speed test gives at least ``expected_speed`` Mbit/s (and band ``expected_desc``, if given)."""
        mbps, band = self.speed()
        fast = (mbps or 0.0) >= expected_speed
        return fast if expected_desc is None else fast and band.lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        """True when a speed test does not give the Excellent band."""
        return self.speed()[1].lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        """True when MMS working is ``expected_status``."""
        return self.mms_works() == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        """True when the data allowance used up is ``expected_status``."""
        return self.surroundings["mobile_data_usage_exceeded"] == expected_status
