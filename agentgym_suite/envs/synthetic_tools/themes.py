"""Domain themes of the synthetic tool worlds: entity names, fields and word lists.

Each theme has a main entity (with a name, a category, a status and a quantity) and an
owner entity the main entity can be assigned to. Names are built from the word lists, so
every seed draws a different catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Theme:
    """Vocabulary of one domain."""

    system: str
    item: str
    items: str
    item_prefix: str
    category_field: str
    categories: tuple[str, ...]
    statuses: tuple[str, ...]
    qty_field: str
    owner: str
    owners: str
    owner_prefix: str
    assign_verb: str
    adjectives: tuple[str, ...]
    nouns: tuple[str, ...]


FIRST_NAMES = ("Ada", "Bruno", "Chen", "Dara", "Elif", "Femi", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Luca",
               "Maya", "Nils", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tara", "Uma", "Viktor", "Wen", "Yara", "Zane")
LAST_NAMES = ("Abara", "Berg", "Costa", "Dube", "Eriksen", "Fujita", "Garcia", "Haddad", "Ivanova", "Jensen", "Kowalski",
              "Lund", "Moreau", "Nakamura", "Okafor", "Petrov", "Quispe", "Rossi", "Silva", "Tanaka", "Usman", "Varga")
ADJECTIVES = ("Amber", "Brisk", "Cobalt", "Dusky", "Ember", "Frosted", "Gilded", "Hollow", "Ivory", "Jade", "Kindled",
              "Lunar", "Mossy", "Nimble", "Opal", "Pale", "Quiet", "Rustic", "Silver", "Tidal", "Umber", "Velvet",
              "Woven", "Young", "Zephyr")

THEMES: tuple[Theme, ...] = (
    Theme("library", "book", "books", "bk", "genre", ("fiction", "history", "science", "poetry", "travel"),
          ("available", "checked_out", "lost", "repair"), "copies", "member", "members", "mb", "lend",
          ADJECTIVES, ("Atlas", "Harbor", "Garden", "Lantern", "River", "Compass", "Orchard", "Meadow", "Tower", "Voyage")),
    Theme("inventory", "product", "products", "pr", "category", ("tools", "paint", "garden", "lighting", "storage"),
          ("active", "discontinued", "backorder", "recalled"), "stock", "supplier", "suppliers", "sp", "source",
          ADJECTIVES, ("Hammer", "Bracket", "Lamp", "Bucket", "Shelf", "Hinge", "Drill", "Hose", "Ladder", "Crate")),
    Theme("clinic", "appointment", "appointments", "ap", "department", ("cardiology", "dermatology", "pediatrics", "radiology", "dental"),
          ("scheduled", "confirmed", "cancelled", "completed"), "duration_minutes", "doctor", "doctors", "dr", "assign",
          ADJECTIVES, ("Checkup", "Consult", "Followup", "Screening", "Scan", "Review", "Visit", "Session", "Exam", "Test")),
    Theme("travel", "trip", "trips", "tp", "region", ("europe", "asia", "americas", "africa", "oceania"),
          ("planned", "booked", "cancelled", "completed"), "travellers", "agent", "agents", "ag", "assign",
          ADJECTIVES, ("Escape", "Getaway", "Tour", "Cruise", "Trek", "Retreat", "Safari", "Journey", "Excursion", "Odyssey")),
    Theme("school", "course", "courses", "cs", "subject", ("math", "biology", "art", "music", "languages"),
          ("open", "full", "closed", "archived"), "seats", "teacher", "teachers", "tc", "assign",
          ADJECTIVES, ("Seminar", "Workshop", "Lecture", "Studio", "Lab", "Colloquium", "Tutorial", "Module", "Clinic", "Forum")),
    Theme("garage", "vehicle", "vehicles", "vh", "kind", ("sedan", "truck", "van", "coupe", "wagon"),
          ("in_service", "waiting", "ready", "picked_up"), "mileage_k", "mechanic", "mechanics", "mc", "assign",
          ADJECTIVES, ("Falcon", "Comet", "Badger", "Marlin", "Raven", "Bison", "Lynx", "Heron", "Otter", "Puma")),
    Theme("restaurant", "reservation", "reservations", "rs", "area", ("patio", "main_hall", "bar", "private_room", "terrace"),
          ("pending", "seated", "cancelled", "no_show"), "party_size", "waiter", "waiters", "wt", "assign",
          ADJECTIVES, ("Table", "Booth", "Corner", "Window", "Alcove", "Nook", "Bench", "Counter", "Loft", "Deck")),
    Theme("warehouse", "pallet", "pallets", "pl", "zone", ("north", "south", "east", "west", "cold"),
          ("stored", "picking", "shipped", "damaged"), "units", "forklift", "forklifts", "fk", "assign",
          ADJECTIVES, ("Load", "Stack", "Batch", "Bundle", "Lot", "Consignment", "Parcel", "Shipment", "Carton", "Bale")),
)
"""The themes a world's domain is drawn from."""
