"""Holiday dates ``get_holiday_date`` answers from, per language, year and holiday name.

The same names and dates upstream's tool knows (its table covers 2023-2025 only); a name is
matched with thefuzz ``partial_ratio`` >= 80, so the spelling here is what the agent sees.
"""

from __future__ import annotations

HOLIDAY_DATES: dict[str, dict[str, dict[str, str]]] = {
    "english": {
        "2025": {
            "New Year's Day": "2025-01-01", "Start of Autumn": "2025-08-07", "Women's Day": "2025-03-08",
            "Laba Festival": "2025-01-07", "Dragon Head Festival": "2025-03-01", "Party Founding Day": "2025-07-01",
            "Qingming Festival": "2025-04-04", "Double Ninth Festival": "2025-10-29", "Dragon Boat Festival": "2025-05-31",
            "Mother's Day": "2025-05-11", "Lantern Festival": "2025-02-15", "Labor Day": "2025-05-01",
            "Qixi Festival": "2025-08-29", "Winter Solstice": "2025-12-21", "Christmas Day": "2025-12-25",
            "National Day": "2025-10-01", "Mid-Autumn Festival": "2025-10-06",
        },
        "2024": {
            "Double Ninth Festival": "2024-10-11", "Qixi Festival": "2024-08-10", "Valentine's Day": "2024-02-14",
            "Qingming Festival": "2024-04-04", "Dragon Boat Festival": "2024-06-10", "Lantern Festival": "2024-02-24",
            "Mid-Autumn Festival": "2024-09-17",
        },
        "2023": {
            "National Day": "2023-10-01", "Dragon Boat Festival": "2023-06-22", "Mid-Autumn Festival": "2023-09-29",
            "Qingming Festival": "2023-04-05", "Double Ninth Festival": "2023-10-23", "Father's Day": "2023-06-18",
        },
    },
    "chinese": {
        "2025": {
            "元旦节": "2025-01-01", "立秋": "2025-08-07", "妇女节": "2025-03-08", "腊八节": "2025-01-07", "龙头节": "2025-03-01",
            "建党节": "2025-07-01", "清明节": "2025-04-04", "重阳节": "2025-10-29", "端午节": "2025-05-31", "母亲节": "2025-05-11",
            "元宵节": "2025-02-15", "劳动节": "2025-05-01", "七夕节": "2025-08-29", "冬至": "2025-12-21", "圣诞节": "2025-12-25",
            "国庆节": "2025-10-01", "中秋节": "2025-10-06",
        },
        "2024": {
            "重阳节": "2024-10-11", "七夕节": "2024-08-10", "情人节": "2024-02-14", "清明节": "2024-04-04", "端午节": "2024-06-10",
            "元宵节": "2024-02-24", "中秋节": "2024-09-17",
        },
        "2023": {
            "国庆节": "2023-10-01", "端午节": "2023-06-22", "中秋节": "2023-09-29", "清明节": "2023-04-05", "重阳节": "2023-10-23",
            "父亲节": "2023-06-18",
        },
    },
}
