"""The names of the human-scored sets a card reports by default (kept apart so the command line needs no pandas)."""

SET_NAMES = ("dailydialog-grade", "convai2-grade", "dailydialog-zhao", "personachat-usr", "topicalchat-usr", "fed",
             "upheld-main", "upheld-llm_arena", "upheld-topical_chat")
