"""Where datasets come from: a local directory or a checksum-verified download.

Resolution order for every dataset:

1. ``$EVALKIT_DATA_DIR/<name>/`` (the layout of ``../shared/data``; large files may be gzipped);
2. ``data/<name>/`` in the project (the download cache);
3. a download from the dataset's public source into that cache, each file checked against its sha256.

Offline with neither, :func:`dataset_dir` raises :class:`DataUnavailable` explaining how to set
``EVALKIT_DATA_DIR``.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DataUnavailable", "ChecksumMismatch", "DataFileDamaged", "UnknownDataset", "Dataset", "DATASETS",
           "dataset_dir", "find_file", "project_data_dir", "sha256_of", "GitTree", "git_blob_sha1"]


class DataUnavailable(RuntimeError):
    """Neither a local copy nor a download of a dataset could be had."""


class DataFileDamaged(ValueError):
    """A data file that cannot be read at all (a truncated or damaged archive); names the file."""


class UnknownDataset(KeyError):
    """A dataset name the kit does not know; the message lists the names it does."""

    def __str__(self) -> str:  # KeyError would print only the quoted name
        return str(self.args[0])


class ChecksumMismatch(RuntimeError):
    """A file's sha256 differs from the pinned one."""


@dataclass(frozen=True)
class Dataset:
    """A dataset's public source: a base URL and the files (relative paths) with pinned sha256.

    ``metadata_file`` names a Croissant ``metadata.json`` whose ``distribution[].sha256`` values
    are checked too (they must agree with the pins).
    """

    name: str
    base_url: str
    files: dict[str, str]
    licence: str
    attribution: str
    metadata_file: str | None = None
    tree: "GitTree | None" = None


@dataclass(frozen=True)
class GitTree:
    """A folder of many small files in a GitHub repository, fetched file by file and packed into one tar.

    ``manifest_sha256`` pins the content: the sha256 of the sorted lines ``<path>\t<git blob sha1>\n``
    over every file under ``folder``. Each downloaded file is checked against its blob hash from the git
    tree, the tree against the manifest, and a local tarball (``archive``) against the same manifest.
    """

    repo: str
    commit: str
    folder: str
    archive: str
    manifest_sha256: str


_UPHELD_COMMIT = "b3da39f75fcc2544d4c43887fedb5ed2dba2edcb"
_LA = "additional_resources/llm_arena_annotated/"
_TC = "additional_resources/topical_chat_annotated/"

UPHELD = Dataset(
    name="upheld",
    base_url=f"https://raw.githubusercontent.com/upwork/upwork-ai-research/{_UPHELD_COMMIT}/data/upheld/",
    metadata_file="metadata.json",
    licence="CC-BY-4.0 (labels and Upwork dialogues); LLM-Arena model outputs CC-BY-NC-4.0; "
            "Topical-Chat part CDLA-Sharing-1.0",
    attribution="UPHELD, Upwork AI Research (github.com/upwork/upwork-ai-research, data/upheld)",
    files={
        "metadata.json": "c0a2b6e49a7b02d26f133f7d0b0b2b69b8bce6ae6bdc8b4e2324806c36f6ebb5",
        "annotator_1.csv": "72c3aefc5a3f14cc8c16b18641c055a97173fa5854e69fe39acd59d884afe44e",
        "annotator_2.csv": "c9365bb8689e9be7a40d894a616bc60b290aa577ebe6e69e5808550d14539a7f",
        "annotator_3.csv": "b15085a48aa66bbce92053ffb4aae74778096a499208f2bfb1345a3af1928673",
        "annotator_4.csv": "734e6e4d25c77deecc04e9c1b18379e9d7737dea8b9672ca3c25f9bfe8d90ef8",
        "annotator_5.csv": "734e6e4d25c77deecc04e9c1b18379e9d7737dea8b9672ca3c25f9bfe8d90ef8",
        "annotator_6.csv": "f575729e2cd68d9fadb58c391d6e0fad8a6073fd972e436d6c839c0027399a20",
        "annotator_7.csv": "363acfb6c378cbfcdf302347a6d3801f8ac8554b22225f9e67bb43dffdd00a90",
        "annotator_8.csv": "91c011de5f3d06a491cb14a2699374454377cc0f34cf0a450bfc8563ee927b8c",
        "annotator_9.csv": "bfb39fc5e734e15483ee600197bfb8d1838586e73734fea3527df34fa1d34815",
        "annotator_10.csv": "4bb9fe1f92bd1f422a53f28a9b0763039e15981ed3be9655288a152ce1ef7cf0",
        _LA + "annotator_1.csv": "462112d24b410508657e995e312f5e8d9a0163c0fa0ac909ed24b2394f9075a0",
        _LA + "annotator_2.csv": "462112d24b410508657e995e312f5e8d9a0163c0fa0ac909ed24b2394f9075a0",
        _LA + "annotator_3.csv": "3397313343bc488827e62c0205bafacb201c7886d6586e3e8bb4981803346d2a",
        _LA + "annotator_4.csv": "407d96a61f0d37fec6856d336f7d53e6cea69706c5459e10558cf026840a3c9c",
        _LA + "annotator_5.csv": "5d29e31d8b522b473f90e10a7ae5dd5b06ddca5818bc9abb8012ff23ad86449b",
        _LA + "annotator_6.csv": "8d9bf4fd4aeb5689b957065b3bae37a5a3b063e88fb4337ff96fe4bdc0e2f635",
        _LA + "annotator_7.csv": "ff03c0e987822f33bdd2da937d3dbe65ea91af8e6e6a86050f2577ae2626d486",
        _LA + "annotator_8.csv": "42ed619ff1f75376ce73a215ca81b0ecf9853867d09cfb153086139eb3ee8615",
        _LA + "annotator_9.csv": "a0dd506d8a0b52b791c2fda351624122cdfba79d5cfd1be1ba0a729cc4980fda",
        _LA + "annotator_10.csv": "26a58e5afcf088e584569a92c0a4bfc552eed4395962afe2b75980642199506d",
        _TC + "annotator_1.csv": "183d73bf03df57f8c6fb1d7ef7d0c0883c851268cb6236c891375932ccd1829b",
        _TC + "annotator_2.csv": "183d73bf03df57f8c6fb1d7ef7d0c0883c851268cb6236c891375932ccd1829b",
        _TC + "annotator_3.csv": "148f37bad178ad1b8ea0383f56eadd74a9fc88c89b15cfa258f49c46af2d78ab",
        _TC + "annotator_4.csv": "8399c86395d3a01ab653d3c926d22d00fab5e55455f5c6b80394930ddd6411fc",
        _TC + "annotator_5.csv": "769e606c8444375f7f156e58c8beeca72e300a17f83d25e79a6f2a85fe7855ae",
        _TC + "annotator_6.csv": "620802c681fe46e513ad61d972e3a41da5f7fce6bd1aac42fb2b46230ff5ff98",
        _TC + "annotator_7.csv": "31205bd61699ab2c26e19fccbbaa539d28f19ebc163eb0b367a5776dac2d0c59",
        _TC + "annotator_8.csv": "5f2241b78d8afcbf7b860718f9a6853e1547da2c934cfddaea64143553a5a120",
        _TC + "annotator_9.csv": "adccf2b510ba42117b722134ca46b75dd6873d3af70badb5865785d1a5cf5f44",
        _TC + "annotator_10.csv": "5567a79e0e506ca1227535a409847c85cbe1b4f9bf3bfd90c1fe51164f05d36d",
    },
)

DAILYDIALOG = Dataset(
    name="dailydialog",
    # A re-host of the official ijcnlp_dailydialog split archives (file dates 2017-04-15), pinned by commit.
    base_url="https://raw.githubusercontent.com/kent-ai-dev/engram/9874fe15199f13692201faa5b530a78786192b5f/"
             "dailydialog_raw/EMNLP_dataset/",
    licence="CC BY-NC-SA 4.0 (per the DailyDialog authors)",
    attribution="DailyDialog, Li et al. 2017 (IJCNLP)",
    files={
        "train.zip": "6191257f8250da0e045bfd1d017645e15b2358df975ec4c5c431a5a1f99662a4",
        "validation.zip": "f068cf7526a56ab5f26e99b74ce9edbc2766f7b060a3c6cef035920b0dd28153",
        "test.zip": "5f9526a5ce4b8af4ca237aa3ff38cbf03becbc596c70b0974d7f5f9af2ea0615",
    },
)

_DDPP_COMMIT = "4b02f9ff671e7e27d8e6b8a1925158bd5729abda"

DAILYDIALOG_PLUSPLUS = Dataset(
    name="dailydialog_plusplus",
    base_url=f"https://raw.githubusercontent.com/iitmnlp/DailyDialog-plusplus/{_DDPP_COMMIT}/dataset/",
    licence="MIT (repository licence; no separate data licence stated)",
    attribution="DailyDialog++, Sai et al. 2020 (TACL), github.com/iitmnlp/DailyDialog-plusplus",
    files={
        "dev.json": "afbdee92c9ab372f599c605609676fceba517f83286d58555f0404f4364b5bfa",
        "test.json": "e8202c3d4b11008a13061b15c4d8ce1f6d05baa9104a9c1f5caa5450134522fa",
    },
)

KHALID_LEE = Dataset(
    name="khalid_lee_2022",
    base_url="https://raw.githubusercontent.com/baber-sos/"
             "Explaining-Dialogue-Evaluation-Metrics-using-Adversarial-Behavioral-Analysis/",
    licence="none stated by the authors (research use)",
    attribution="Khalid & Lee 2022 (NAACL), adversarial test suite, DailyDialog part",
    files={},
    tree=GitTree(repo="baber-sos/Explaining-Dialogue-Evaluation-Metrics-using-Adversarial-Behavioral-Analysis",
                 commit="561467992f7d83fe36e43b9e61c56c53e870b75c", folder="daily_dialogue/test_conversations/",
                 archive="daily_dialogue_test_conversations.tar.gz",
                 manifest_sha256="6f5acec4230891bcb94178e26df48f874c0e0ca82101a2e8607634599af9d5fd"),
)

_HC = "human_corr/runs/chatbot_arena_mirror-gemini-2.5-pro-user-gpt-4o-assistant-claude-4-sonnet-judge/"

MIRRORBENCH = Dataset(
    name="mirrorbench",
    base_url="https://raw.githubusercontent.com/SAP/mirrorbench/2d4b802fc89948cf15d4ac6dfbabd8b18daf8f9a/scratch_pad/",
    licence="Apache-2.0 (MirrorBench); the underlying conversations keep their own licences (OASST1 Apache-2.0, "
            "Chatbot Arena CC-BY-NC-4.0 outputs / CC-BY-4.0 prompts, Qulac MIT, ClariQ unstated)",
    attribution="MirrorBench, SAP (github.com/SAP/mirrorbench), processed QULAC / ClariQ / OASST1 / ChatbotArena sets",
    files={
        "data/chatbot_arena/chatbot_arena_mirror.jsonl": "3728861c22ee58b8b7bd26f26c21fbde0606a03678d0f586377d098a54bec44f",
        "data/clariq/clariq_mirror.jsonl": "ebbe89f149e258a4296e762576f27ad5cbec842e46305ac6602f441690e1308d",
        "data/oasst1/oasst1_mirror.jsonl": "875f4a4db98fdd24d5ffb1b5f405fbfba7d8739c107031d70883b6ddadff6a3e",
        "data/qulac/qulac_mirror.jsonl": "68b5acb97748e9f3e83a9c4f0a8091030dcdb9ef4786a023ba19f98a63338a97",
        _HC + "correlation_report.json": "36f53285480c639253b432d4dd5e556300edaa2561b1c2779ad1fa611154e0a7",
        _HC + "gteval_judge_scores.json": "8993a2498864b77351ac0a685979f03da7898180cfd00e9d51f6bd88897536b5",
        _HC + "gteval_labeled.json": "667dcb73417eb17d03da5eaf2d02313a59551cc80df5c4ecd2709976dc5f9c46",
        _HC + "pi_pairwise_judge_scores.json": "aa25cff9fa52001f6f34b79f09b1b43e20d54d36e6a5e4111928de8804e713c2",
        _HC + "pi_pairwise_labeled.json": "48be6958458bf854ac608ef2254757efa1c07d605154e10637ff658b64fc322f",
    },
)

# The PairEval paper's meta-evaluation sets (its Table 1), one pinned origin each; the staged copies live under
# metaeval/ (``$EVALKIT_DATA_DIR/metaeval/<set>/``), so the dataset names carry that folder.
_GRADE_RUNS = [f"{corpus}/{system}" for corpus, systems in
               (("convai2", ("bert_ranker", "dialogGPT", "transformer_generator", "transformer_ranker")),
                ("dailydialog", ("transformer_generator", "transformer_ranker"))) for system in systems]
_GRADE_SHA = dict(zip(
    [f"evaluation/eval_data/{run}/human_{part}.txt" for run in _GRADE_RUNS for part in ("ctx", "hyp", "ref")]
    + [f"evaluation/human_score/{run}/human_score.txt" for run in _GRADE_RUNS],
    ["aef40be56ed921fcba68a71bfb8771d23164065f6273b44d6702e8ce3a0221f8",
     "38025574e09b368b12e1e281342ff8a6246b286f5e1554eb8a090e0a6a0b95b7",
     "52cb4f8a53f5ff26c652fd60a50ff284041b6004e77653816880c4232f5e9055",
     "62eb5ba5f4fbec1f6cd8a46534fa6b81b8b1f461cc99f42ee8e9de0e7493667f",
     "98441ae4d2fec627acf8768c44f9fbef31638fb0f91588f1f50d8b1a8856e10c",
     "b5cbb7fedf7f164737ecfb64ef87a8efec9a7768bcd4f8303e7645950b1fb7a1",
     "c25edd3a38c4a97b6eadaec650becf132b308aca886886deac53a63262116805",
     "c8983567ee23469746d13011d1a9c457a594f19210f230f408fe83ed2c8fbe79",
     "f1c2270cb2239dd27b207069b43f3b6e95a9ba362dc12b4c4e780f44ed8a5780",
     "c25edd3a38c4a97b6eadaec650becf132b308aca886886deac53a63262116805",
     "1614140b9dc6fe85c4ae80724a660e129ad59ea435c26f1f68d9d2cbc0eab37f",
     "f1c2270cb2239dd27b207069b43f3b6e95a9ba362dc12b4c4e780f44ed8a5780",
     "63b9db6e913ab26250b11c7e4d5e8194d5a8a8ad226ab44b219a82fc63860afb",
     "8e8a10c16025b5e2883dbae38dad70e343af28facd8d3c7f66ff6bfdd2314745",
     "ec8a2a93422b021bfd3dd95c5440b256d78e3fb5a3a5b812d8a615d1d65ae8ec",
     "63b9db6e913ab26250b11c7e4d5e8194d5a8a8ad226ab44b219a82fc63860afb",
     "ddbf2ac3fdefc56eca4082455e3e4fbe25b295c5b8f50bac19cbb727db97b781",
     "ec8a2a93422b021bfd3dd95c5440b256d78e3fb5a3a5b812d8a615d1d65ae8ec",
     "cb8b4cc5f4193df27cf3875f2f38a8cfeebbda0612b7e3567c3f58b365b188af",
     "5beb7ba9d603c0a0fc92cdeb48dc6cfcc1827675b74a4f99fa6023f0fdb3cd7e",
     "8a416e99523896207db3ca01e21b508dcd9407b147d7a4bfb169503952dd9a7f",
     "28884a5b6be7c569fb66ffbcf459bafad63a796c9861e1743df469df36684024",
     "39512c64982adb483c6fe52d6ff464433bf477dda790c68a0f1697d154b2678c",
     "14abb5429689658ff3e753f51a248427545588ab9bce2c889b4d9398bed5a876"]))

METAEVAL_GRADE = Dataset(
    name="metaeval/grade",
    base_url="https://raw.githubusercontent.com/li3cmz/GRADE/c6cec028e1b4495a388f1c181b10221e4d0c5955/",
    licence="none stated by the authors (research use)",
    attribution="GRADE human coherence ratings, Huang et al. 2020 (EMNLP), github.com/li3cmz/GRADE",
    files=_GRADE_SHA,
)

METAEVAL_USR = Dataset(
    name="metaeval/usr",
    base_url="https://raw.githubusercontent.com/SmartDataAnalytics/proxy_indicators/"
             "5017317f0d03cdbc64a3a52c09fc0a6bf5c492b3/data/",
    licence="none stated by the authors (research use)",
    attribution="USR annotations, Mehri & Eskenazi 2020 (ACL); copies in SmartDataAnalytics/proxy_indicators",
    files={
        "readme.md": "ffa4c8e70889f34f977eee02f0e9d6fbe9f906cdb99915bf11b73702ca5ffe11",
        "usr_percona_chat.json": "7acf3ff80c02e791138bc9a0db440a36d07d700fe1457066adbf73b8f0c64a4b",
        "usr_topical_chat.json": "8e4e6961585f58edb573c0153766547442bde69577e8df6ba9e24a84dc9483e5",
    },
)

METAEVAL_FED = Dataset(
    name="metaeval/fed",
    base_url="https://raw.githubusercontent.com/DSincerity/FED_Replication/f0a9a675ffcd134e9cb606c46afc8e0c7ad31ba4/",
    licence="none stated by the authors (research use)",
    attribution="FED, Mehri & Eskenazi 2020 (SIGDIAL); copy in DSincerity/FED_Replication",
    files={"fed_data.json": "69a608314d982e202c46a095ea99f4174332745b513034f6244f7551556e7e46"},
)

METAEVAL_ZHAO = Dataset(
    name="metaeval/dailydialog_zhao",
    base_url="https://raw.githubusercontent.com/e0397123/xDial-Eval/638036c657240c8913e491c1c61c40402bc763d2/"
             "data/turn/",
    licence="GPL-3.0 (the xDial-Eval repository; the ratings are Zhao et al.'s)",
    attribution="DailyDialog-Zhao ratings, Zhao et al. 2020 (ACL); derived copy in e0397123/xDial-Eval",
    files={"dailydialog-zhao.csv": "6437c122af4aa3cbc16a27a69501a14ad5be84c9bf8015a1680fd56b8134c510"},
)

TOPICAL_CHAT = Dataset(
    name="topical_chat",
    # Only the validation and test conversations: upstream's train.json is too large for the staged copy, and
    # the judge trains on the validation conversations (USR's Topical-Chat items come from test_freq).
    base_url="https://raw.githubusercontent.com/alexa/Topical-Chat/7c939229cbcf6f55f6977b341a5a2f2fe982d53f/",
    licence="CDLA-Sharing-1.0",
    attribution="Topical-Chat, Gopalakrishnan et al. 2019 (Interspeech), github.com/alexa/Topical-Chat",
    files={
        "conversations/valid_freq.json": "d14e8bde94fa5556d4aad8fd3fb666df674e4fef8b4193c8c3c06c72822a366b",
        "conversations/valid_rare.json": "b0f3c59584ea4ed61e368dc94feade6ba499a207a6437573b028d1f3ff918714",
        "conversations/test_freq.json": "3c65693d59e40a1fb58ead35dcfe85fbcc88ea93a4d74557df620996f72c8f08",
        "conversations/test_rare.json": "4f21a18be16e310840280678e7bb4646852573b239b69183ddf8898f40119567",
    },
)

PERSONACHAT = Dataset(
    name="personachat",
    # ConvAI2's validation dialogues only (the train file is too large for the staged copy). Byte-identical to
    # ParlAI's official valid_self_original_no_cands.txt (md5 d27c8cac40fc7c937fab999993ef2a9b). The source of
    # most personachat-usr and convai2-grade contexts: it trains a judge only after the leak cut.
    base_url="https://raw.githubusercontent.com/bzantium/Posterior-Knowledge-Selection/"
             "d7ab647970b200c8a1ecbdfacb2c8fd3f3e11a37/data/",
    licence="CC BY 4.0 (ConvAI2 data, per ParlAI's ConvAI2 README; the re-hosting repository states none)",
    attribution="PersonaChat, Zhang et al. 2018 (ACL); ConvAI2, Dinan et al. 2019",
    files={"valid_self_original_no_cands.txt": "7e26e8a266583dfe21fd2df4c651a2831dceeb7c87be9c7bb517974d9979c363"},
)

COMMONSENSE_DIALOGUES = Dataset(
    name="commonsense_dialogues",
    base_url="https://raw.githubusercontent.com/alexa/Commonsense-Dialogues/53b55325ee010279ce4ad5ca019fa2878e4f5b57/"
             "data/",
    licence="CC BY-NC 4.0 (repository LICENSE; non-commercial)",
    attribution="Commonsense-Dialogues, Zhou et al. 2021 (SIGDIAL), github.com/alexa/Commonsense-Dialogues",
    files={"valid.json": "53da3c2cc6cfbb3cecec0246ce82047b7a7f3a8f3e4c8b1beb224c3a76968e87",
           "test.json": "75053829185a7c439db14f52f0606b435f4d56bfb16322ec8f192b63e4f37d45"},
)

DATASETS: dict[str, Dataset] = {d.name: d for d in (UPHELD, DAILYDIALOG, DAILYDIALOG_PLUSPLUS, KHALID_LEE,
                                                     MIRRORBENCH, METAEVAL_GRADE, METAEVAL_USR, METAEVAL_FED,
                                                     METAEVAL_ZHAO, TOPICAL_CHAT, PERSONACHAT,
                                                     COMMONSENSE_DIALOGUES)}

_ENV_VAR = "EVALKIT_DATA_DIR"


def project_data_dir() -> Path:
    """The download cache: ``$EVALKIT_CACHE_DATA`` if set, else ``data/`` beside the package."""
    override = os.environ.get("EVALKIT_CACHE_DATA")
    return Path(override) if override else Path(__file__).resolve().parent.parent / "data"


def sha256_of(path: Path) -> str:
    """sha256 of a file's *uncompressed* bytes (``.gz`` files are read through gzip)."""
    digest = hashlib.sha256()
    opener = gzip.open if path.suffix == ".gz" else open
    from .jsonl import archive_errors_named

    with archive_errors_named(path, DataFileDamaged, "gzip file"), opener(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def find_file(root: Path, relative: str) -> Path | None:
    """The file ``relative`` under ``root``, plain or gzipped (``name.gz``), or None."""
    for candidate in (root / relative, root / (relative + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a file's bytes (what a git tree lists for it).

    >>> git_blob_sha1(b"")
    'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'
    """
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _manifest_digest(entries: dict[str, str]) -> str:
    return hashlib.sha256("".join(f"{path}\t{sha}\n" for path, sha in sorted(entries.items())).encode()).hexdigest()


def _tar_manifest(archive: Path) -> dict[str, str]:
    import tarfile

    from .jsonl import archive_errors_named

    with archive_errors_named(archive, DataFileDamaged), tarfile.open(archive) as bundle:
        return {m.name: git_blob_sha1(bundle.extractfile(m).read())  # type: ignore[union-attr]
                for m in bundle.getmembers() if m.isfile()}


def _verify_tree(root: Path, dataset: Dataset, check: bool) -> None:
    tree = dataset.tree
    assert tree is not None
    archive = find_file(root, tree.archive)
    if archive is None:
        raise DataUnavailable(f"{dataset.name}: {root} lacks {tree.archive!r}. Point {_ENV_VAR} at a directory "
                              f"with the layout of ../shared/data, or unset it to download.")
    if check:
        actual = _manifest_digest(_tar_manifest(archive))
        if actual != tree.manifest_sha256:
            raise ChecksumMismatch(f"{archive}: content manifest sha256 {actual[:16]}… differs from the pinned "
                                   f"{tree.manifest_sha256[:16]}… of {tree.repo}@{tree.commit[:12]}.")


def _fetch(url: str, dataset: Dataset, timeout: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as error:
        raise DataUnavailable(
            f"{dataset.name}: could not download {url} ({error}). This machine may be offline: set "
            f"{_ENV_VAR} to a directory holding '{dataset.name}/' (layout of ../shared/data), e.g. "
            f"export {_ENV_VAR}=../shared/data") from error


def _download_tree(dataset: Dataset, target: Path, timeout: float = 60.0, api_url: str | None = None,
                   raw_url: str | None = None) -> None:
    """Fetch a pinned git folder file by file, verify it and pack it into ``target/<archive>``."""
    import tarfile

    tree = dataset.tree
    assert tree is not None
    api = api_url or f"https://api.github.com/repos/{tree.repo}/git/trees/{tree.commit}?recursive=1"
    listing = json.loads(_fetch(api, dataset, timeout))
    entries = {item["path"]: item["sha"] for item in listing.get("tree", [])
               if item.get("type") == "blob" and item["path"].startswith(tree.folder)}
    if listing.get("truncated") or _manifest_digest(entries) != tree.manifest_sha256:
        raise ChecksumMismatch(f"{api}: the listed files do not match the pinned manifest of {dataset.name}")
    raw = raw_url or f"https://raw.githubusercontent.com/{tree.repo}/{tree.commit}/"
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target, suffix=".partial", delete=False) as handle:
        try:
            with tarfile.open(fileobj=handle, mode="w:gz") as bundle:
                for path, expected in sorted(entries.items()):
                    payload = _fetch(raw + urllib.request.quote(path), dataset, timeout)
                    if git_blob_sha1(payload) != expected:
                        raise ChecksumMismatch(f"{raw}{path}: content differs from git blob {expected[:12]}…")
                    info = tarfile.TarInfo(path)
                    info.size = len(payload)
                    bundle.addfile(info, io.BytesIO(payload))
        except BaseException:
            Path(handle.name).unlink(missing_ok=True)
            raise
    Path(handle.name).replace(target / tree.archive)


def _verify(root: Path, dataset: Dataset, check: bool) -> None:
    if dataset.tree is not None:
        _verify_tree(root, dataset, check)
        return
    missing = [rel for rel in dataset.files if find_file(root, rel) is None]
    if missing:
        raise DataUnavailable(
            f"{dataset.name}: {root} lacks {len(missing)} file(s), e.g. {missing[0]!r}. "
            f"Point {_ENV_VAR} at a directory with the layout of ../shared/data, or unset it to download.")
    if not check:
        return
    for rel, expected in dataset.files.items():
        path = find_file(root, rel)
        assert path is not None
        actual = sha256_of(path)
        if actual != expected:
            raise ChecksumMismatch(
                f"{path}: sha256 {actual[:16]}… differs from the pinned {expected[:16]}… of the public "
                f"release. Restore the file, or pass verify=False to use a modified copy knowingly.")


def _download(dataset: Dataset, target: Path, base_url: str | None = None, timeout: float = 60.0) -> None:
    """Download every missing file of ``dataset`` into ``target``, verifying each before it lands."""
    base = base_url or dataset.base_url
    target.mkdir(parents=True, exist_ok=True)
    for rel, expected in dataset.files.items():
        if find_file(target, rel) is not None:
            continue
        url = base + rel
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                payload = response.read()
        except (urllib.error.URLError, OSError) as error:
            raise DataUnavailable(
                f"{dataset.name}: could not download {url} ({error}). This machine may be offline: set "
                f"{_ENV_VAR} to a directory holding '{dataset.name}/' (layout of ../shared/data), e.g. "
                f"export {_ENV_VAR}=../shared/data") from error
        actual = hashlib.sha256(payload).hexdigest()
        if actual != expected:
            raise ChecksumMismatch(f"{url}: downloaded sha256 {actual[:16]}… differs from pinned {expected[:16]}…")
        destination = target / rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        # Write to a temporary name first so an interrupted download never leaves a partial file.
        with tempfile.NamedTemporaryFile(dir=destination.parent, delete=False) as handle:
            handle.write(payload)
        Path(handle.name).replace(destination)
    if dataset.metadata_file:
        _check_croissant(dataset, target)


def _check_croissant(dataset: Dataset, root: Path) -> None:
    """The Croissant metadata's sha256 values must agree with the pins for the files it lists."""
    meta_path = find_file(root, dataset.metadata_file or "")
    if meta_path is None:
        return
    opener = gzip.open if meta_path.suffix == ".gz" else open
    with opener(meta_path, "rt", encoding="utf-8") as handle:
        meta = json.load(handle)
    for entry in meta.get("distribution", []):
        name, digest = entry.get("contentUrl"), entry.get("sha256")
        if name in dataset.files and digest and digest != dataset.files[name]:
            raise ChecksumMismatch(f"{meta_path}: sha256 of {name} in the Croissant metadata ({digest[:16]}…) "
                                   f"differs from the pinned {dataset.files[name][:16]}…")


def dataset_dir(name: str, *, data_dir: str | os.PathLike | None = None, verify: bool = True,
                download: bool = True, base_url: str | None = None) -> Path:
    """The directory holding dataset ``name``, fetching it first when needed.

    ``data_dir`` (or ``$EVALKIT_DATA_DIR``) is a directory that contains ``<name>/``. Without one,
    the project cache ``data/<name>/`` is used and filled from the public source when incomplete.
    ``verify`` checks every file's sha256 against the pinned release.
    """
    if name not in DATASETS:
        raise UnknownDataset(f"unknown dataset {name!r}; the kit knows: {', '.join(sorted(DATASETS))}")
    dataset = DATASETS[name]
    given = data_dir if data_dir is not None else os.environ.get(_ENV_VAR)
    if given:
        root = Path(given).expanduser() / name
        if not root.is_dir():
            raise DataUnavailable(f"{_ENV_VAR}/data_dir is {given!r} but {root} is not a directory.")
        _verify(root, dataset, verify)
        return root
    root = project_data_dir() / name
    if dataset.tree is not None:
        if find_file(root, dataset.tree.archive) is None:
            if not download:
                raise DataUnavailable(f"{dataset.name} is not in {root}; set {_ENV_VAR} or allow the download.")
            _download_tree(dataset, root)
    elif not all(find_file(root, rel) for rel in dataset.files):
        if not download:
            raise DataUnavailable(f"{dataset.name} is not in {root}; set {_ENV_VAR} or allow the download.")
        _download(dataset, root, base_url=base_url)
    _verify(root, dataset, verify)
    return root

