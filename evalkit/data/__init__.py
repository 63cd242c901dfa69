"""The data layer: where each dataset comes from, how its files are read, and the one dialogue type.

* :mod:`.sources` — each dataset's pinned source, checksum-verified download, ``EVALKIT_DATA_DIR``;
* :mod:`.jsonl` — JSON lines and CSV readers whose errors name the file, the line and the field, and the
  guard of CSV cells a spreadsheet would run as formulas;
* :mod:`.dialogue` — a conversation (:class:`Turn`, :data:`Texts`, :data:`History`) and its one renderer;
* :mod:`.overlap` — the normalised text and the units by which two conversations are found to share content;
* :mod:`.specfile` — the YAML field reader every settings file of the kit goes through;
* :mod:`.folders` — an output folder named on a command line, refused naming the file when it lies under one.
"""
from evalkit.data.dialogue import Conversation, History, Texts, Turn, render
from evalkit.data.folders import out_folder
from evalkit.data.sources import DataUnavailable, dataset_dir, find_file
from evalkit.data.specfile import SpecError, read_yaml

__all__ = ["Conversation", "History", "Texts", "Turn", "render", "DataUnavailable", "dataset_dir", "find_file",
           "SpecError", "read_yaml", "out_folder"]
