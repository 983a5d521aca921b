"""Retail domain of tau2: users, products with variants, orders; lookups and order changes.

Semantics follow the domain's policy: pending orders can be cancelled or modified (address,
payment, items: once), delivered orders can have items returned or exchanged (once); gift
cards are debited or refunded immediately, other methods are only recorded in the payment
history.
"""

from __future__ import annotations

import json
from typing import Any

from agentgym_suite.envs.tau2.toolkit import STRING, STRING_LIST, WRITE, CustomerServiceTools, described, tool
from agentgym_suite.envs.tau2.record_models import UserAddress

_ORDER_ID = described(STRING, "Order id, e.g. '#W0000000' (note the leading '#').")
_USER_ID = described(STRING, "User id, e.g. 'sara_doe_496'.")
_PAYMENT_ID = described(STRING, "Payment method id from the user's profile, e.g. 'gift_card_0000000' or 'credit_card_0000000'.")
_ADDRESS = {
    "address1": described(STRING, "First address line, e.g. '123 Main St'."),
    "address2": described(STRING, "Second address line, e.g. 'Apt 1', or ''."),
    "city": described(STRING, "City."),
    "state": described(STRING, "State, e.g. 'CA'."),
    "country": described(STRING, "Country, e.g. 'USA'."),
    "zip": described(STRING, "Zip code, e.g. '12345'."),
}


class RetailTools(CustomerServiceTools):
    """The retail agent's tools over a ``{"products", "users", "orders"}`` database."""

    domain = "retail"

    # ------------------------------------------------------------------ lookups
    def _order(self, order_id: str) -> dict[str, Any]:
        order = self.db["orders"].get(order_id)
        if order is None:
            raise ValueError("Order not found")
        return order

    def _user(self, user_id: str) -> dict[str, Any]:
        user = self.db["users"].get(user_id)
        if user is None:
            raise ValueError("User not found")
        return user

    def _product(self, product_id: str) -> dict[str, Any]:
        product = self.db["products"].get(product_id)
        if product is None:
            raise ValueError("Product not found")
        return product

    def _payment_method(self, user_id: str, payment_method_id: str) -> dict[str, Any]:
        method = self._user(user_id)["payment_methods"].get(payment_method_id)
        if method is None:
            raise ValueError("Payment method not found")
        return method

    @staticmethod
    def _check_items_present(order: dict[str, Any], item_ids: list[str], message: str) -> None:
        """Refuse with ``message`` (``{item_id}`` filled in) when an item id is listed more times than ordered."""
        present = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > present.count(item_id):
                raise ValueError(message.format(item_id=item_id))

    def _price_difference(self, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str], *,
                          modify: bool) -> tuple[float, list[dict[str, Any]]]:
        """Sum of new minus old prices, and the new variants; the checks and wording of the exchange
        (``modify=False``) or pending-order modification (``modify=True``) tool."""
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match" + ("" if modify else "."))
        diff: float = 0
        variants = []
        for item_id, new_item_id in zip(item_ids, new_item_ids):
            if modify and item_id == new_item_id:
                raise ValueError("The new item id should be different from the old item id")
            item = next((i for i in order["items"] if i["item_id"] == item_id), None)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._product(item["product_id"])["variants"].get(new_item_id)
            if variant is None:
                raise ValueError("Variant not found")
            if not variant["available"]:
                raise ValueError(f"New item {new_item_id} not found or available")
            diff += variant["price"] - item["price"]
            variants.append(variant)
        return diff, variants

    # ------------------------------------------------------------------ read tools
    @tool("Find a user id from the user's email address.", email=described(STRING, "Email address, e.g. 'someone@example.com'."))
    def find_user_id_by_email(self, email: str) -> str:
        for user_id, user in self.db["users"].items():  # compared as upstream compares (no trimming)
            if user["email"].lower() == email.lower():
                return user_id
        raise ValueError("User not found")

    @tool(
        "Find a user id from first name, last name and zip code. Use it when the user cannot give an email.",
        first_name=described(STRING, "First name, e.g. 'John'."),
        last_name=described(STRING, "Last name, e.g. 'Doe'."),
        zip=described(STRING, "Zip code, e.g. '12345'."),
    )
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:  # noqa: A002 - the tool's argument name
        for user_id, user in self.db["users"].items():  # compared as upstream compares (no trimming, zip as given)
            name = user["name"]
            if (name["first_name"].lower() == first_name.lower() and name["last_name"].lower() == last_name.lower()
                    and user["address"]["zip"] == zip):
                return user_id
        raise ValueError("User not found")

    @tool("Get the status, items, address, fulfilments and payments of an order.", order_id=_ORDER_ID)
    def get_order_details(self, order_id: str) -> dict[str, Any]:
        return self._order(order_id)

    @tool("Get a product type and all its variants (item ids, options, availability, price).",
          product_id=described(STRING, "Product id, e.g. '6086499569' (not an item id)."))
    def get_product_details(self, product_id: str) -> dict[str, Any]:
        return self._product(product_id)

    @tool("Get one item (variant) by item id: options, availability, price.",
          item_id=described(STRING, "Item id, e.g. '1008292230' (not a product id)."))
    def get_item_details(self, item_id: str) -> dict[str, Any]:
        for product in self.db["products"].values():
            if item_id in product["variants"]:
                return product["variants"][item_id]
        raise ValueError("Item not found")

    @tool("Get a user's profile: name, address, email, payment methods and order ids.", user_id=_USER_ID)
    def get_user_details(self, user_id: str) -> dict[str, Any]:
        return self._user(user_id)

    @tool("List every product type's name and product id (the store has 50 product types).")
    def list_all_product_types(self) -> str:
        names = {product["name"]: product["product_id"] for product in self.db["products"].values()}
        return json.dumps(names, sort_keys=True)

    # ------------------------------------------------------------------ write tools
    @tool("Cancel a pending order after explicit user confirmation. Payments are refunded: to gift cards at once, "
          "to other methods within 5-7 business days.", tool_kind=WRITE, order_id=_ORDER_ID,
          reason=described({"type": "string", "enum": ["no longer needed", "ordered by mistake"]}, "Cancellation reason."))
    def cancel_pending_order(self, order_id: str, reason: str) -> dict[str, Any]:
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be cancelled")
        if reason not in {"no longer needed", "ordered by mistake"}:
            raise ValueError("Invalid reason")
        refunds = []
        for payment in order["payment_history"]:
            refunds.append({"transaction_type": "refund", "amount": payment["amount"], "payment_method_id": payment["payment_method_id"]})
            method = self._payment_method(order["user_id"], payment["payment_method_id"])
            if method["source"] == "gift_card":
                method["balance"] = round(method["balance"] + payment["amount"], 2)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return order

    @tool("Request an exchange of delivered items for other variants of the same products (once per order), "
          "after explicit user confirmation. The price difference is paid or refunded with the given method.",
          tool_kind=WRITE, order_id=_ORDER_ID,
          item_ids=described(STRING_LIST, "Item ids to exchange (duplicates allowed)."),
          new_item_ids=described(STRING_LIST, "New item ids, position by position, same product as the old item."),
          payment_method_id=_PAYMENT_ID)
    def exchange_delivered_order_items(self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> dict[str, Any]:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be exchanged")
        self._check_items_present(order, item_ids, "Number of {item_id} not found.")
        diff, _ = self._price_difference(order, item_ids, new_item_ids, modify=False)
        diff = round(diff, 2)
        method = self._payment_method(order["user_id"], payment_method_id)
        if method["source"] == "gift_card" and method["balance"] < diff:
            raise ValueError("Insufficient gift card balance to pay for the price difference")
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff
        return order

    @tool("Change the shipping address of a pending order after explicit user confirmation.", tool_kind=WRITE,
          order_id=_ORDER_ID, **_ADDRESS)
    def modify_pending_order_address(self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict[str, Any]:  # noqa: A002
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        order["address"] = _address(address1, address2, city, state, country, zip)
        return order

    @tool("Swap items of a pending order for other variants of the same products (only once per order), after "
          "explicit user confirmation. The price difference is paid or refunded with the given method.",
          tool_kind=WRITE, order_id=_ORDER_ID,
          item_ids=described(STRING_LIST, "Item ids to modify (duplicates allowed)."),
          new_item_ids=described(STRING_LIST, "New item ids, position by position, same product as the old item."),
          payment_method_id=_PAYMENT_ID)
    def modify_pending_order_items(self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> dict[str, Any]:
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be modified")
        self._check_items_present(order, item_ids, "{item_id} not found")
        diff, variants = self._price_difference(order, item_ids, new_item_ids, modify=True)
        method = self._payment_method(order["user_id"], payment_method_id)
        if method["source"] == "gift_card" and method["balance"] < diff:
            raise ValueError("Insufficient gift card balance to pay for the new item")
        order["payment_history"].append({
            "transaction_type": "payment" if diff > 0 else "refund",
            "amount": abs(diff),
            "payment_method_id": payment_method_id,
        })
        if method["source"] == "gift_card":
            method["balance"] = round(method["balance"] - diff, 2)
        last = variants[-1] if variants else None
        for item_id, new_item_id in zip(item_ids, new_item_ids):
            item = next(i for i in order["items"] if i["item_id"] == item_id)
            item["item_id"] = new_item_id
            # as upstream does: every modified item takes the price and options of the *last* new variant
            assert last is not None
            item["price"] = last["price"]
            item["options"] = dict(last["options"])
        order["status"] = "pending (item modified)"
        return order

    @tool("Pay a pending order with a different payment method after explicit user confirmation.", tool_kind=WRITE,
          order_id=_ORDER_ID, payment_method_id=_PAYMENT_ID)
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> dict[str, Any]:
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        method = self._payment_method(order["user_id"], payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ValueError("There should be exactly one payment for a pending order")
        old_id = history[0]["payment_method_id"]
        if old_id == payment_method_id:
            raise ValueError("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if method["source"] == "gift_card" and method["balance"] < amount:
            raise ValueError("Insufficient gift card balance to pay for the order")
        history.append({"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id})
        history.append({"transaction_type": "refund", "amount": amount, "payment_method_id": old_id})
        if method["source"] == "gift_card":
            method["balance"] = round(method["balance"] - amount, 2)
        old = self._payment_method(order["user_id"], old_id)
        if old["source"] == "gift_card":
            old["balance"] = round(old["balance"] + amount, 2)
        return order

    @tool("Change a user's default address after explicit user confirmation.", tool_kind=WRITE, user_id=_USER_ID, **_ADDRESS)
    def modify_user_address(self, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict[str, Any]:  # noqa: A002
        user = self._user(user_id)
        user["address"] = _address(address1, address2, city, state, country, zip)
        return user

    @tool("Request the return of delivered items (once per order) after explicit user confirmation. The refund goes "
          "to the original payment method or a gift card.", tool_kind=WRITE, order_id=_ORDER_ID,
          item_ids=described(STRING_LIST, "Item ids to return (duplicates allowed)."), payment_method_id=_PAYMENT_ID)
    def return_delivered_order_items(self, order_id: str, item_ids: list[str], payment_method_id: str) -> dict[str, Any]:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be returned")
        method = self._payment_method(order["user_id"], payment_method_id)
        if method["source"] != "gift_card" and payment_method_id != order["payment_history"][0]["payment_method_id"]:
            raise ValueError("Payment method should be the original payment method")
        self._check_items_present(order, item_ids, "Some item not found")
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return order


def _address(address1: Any, address2: Any, city: Any, state: Any, country: Any, zip: Any) -> dict[str, Any]:  # noqa: A002
    """The address record as upstream builds it (pydantic's ``UserAddress``: converts or refuses in its words)."""
    return UserAddress(address1=address1, address2=address2, city=city, state=state, country=country,
                       zip=zip).model_dump()
