"""Batch grids: a parameter grid expanded into units, run in a local process pool or on a Ray cluster.

A grid file (YAML) names what each unit runs — a notebook through papermill, or a command line — and the
grid of parameters: every combination of the listed values is one unit (``fixed`` values go to all).

.. code-block:: yaml

    name: judges-by-seed
    kind: notebook                 # or: command
    notebook: 03_metric_correlation
    base_params: smoke             # the parameter set the grid's values override (smoke, full or a file)
    grid: {seed: [1, 2], judges: [[yes_no], [likert]]}
    fixed: {judge_items: 12}
    out: runs/judges-by-seed       # relative to the grid file
    retries: 1
    workers: 2                     # local process pool size

A command unit runs in the grid file's folder, so relative paths in its arguments (``scored_{seed}.jsonl``)
name files beside the grid file. Its arguments are filled by one grammar, checked when the file is read:

- ``{name}`` — a name of letters, digits and ``_`` in single braces — is replaced by the unit's parameter
  ``name``; a name that is no parameter is an error;
- ``{{name}}`` is the literal text ``{name}``;
- a word in braces that is not such a name (``{judge-name}``, ``{1}``) is an error naming the file and field;
- any other brace is literal text (``{"a": 1}``, ``{}``).

Its result is the last line of its standard output that is a whole JSON object (other lines may follow it);
a command that prints none fails with that reason. A command unit runs in a process group of its own,
under a small reaper that kills the group — the command and whatever it started — when the command ends,
when the unit times out, and when the worker or driver above it dies, however it dies (SIGKILL included).

Every unit writes ``unit.json`` (its parameters, status, attempts, seconds, result or error) into
``out/units/<unit id>/``; a unit already finished there is skipped on the next run. A failing unit is
retried ``retries`` times and then reported; the others finish. The results of all units are gathered into
``out/results.csv`` (and ``results.parquet`` when pyarrow is installed), one row per unit with its parameters
and numeric results.

Credentials never leave in clear: a unit's folder name is its short values and a hash of the whole unit
(URLs and parameters named like ``api_key``, ``token`` or ``password`` are left out of it), and every text
written — ``unit.json``, ``results.csv``, the unit's captured output, its executed notebook, errors and
progress — passes :func:`evalkit.models.redact`, with the unit's own secrets masked wherever they appear:
URL passwords and query values, secret-named parameters, the values of the environment's credential
variables (:func:`evalkit.models.redaction.secret_variable`: ``MYSQL_PWD``, ``SSHPASS``, ``*PASSPHRASE*``,
``*WEBHOOK*`` and the like, and a URL password in any variable), and the secrets a command line carries
(options, parameters, headers and JSON fields whose name ends in a credential word by
:func:`evalkit.grid.credential_names.credential_name` — ``--password x``, ``--accessToken x``, ``-storepass x``,
``{"token": "x"}`` — and ``--cookie``, ``curl -u user:pw``, ``mysql -pPASS``, ``docker login -p x``,
``sshpass -p``, secrets piped or fed to a program's standard input, keys in a URL's path, the bodies of
here-documents and ``expect`` scripts it carries: :mod:`evalkit.grid.scripts`), and the credentials
the command prints (:func:`evalkit.grid.printed_secrets.output_secrets`: JSON fields, configuration lines and table
rows named as credentials, PEM private keys). A map or list under a credential's name is masked whole, and
never named in a folder. A piece of a secret that is one ordinary word stays readable elsewhere in the output.
A URL is kept as :func:`evalkit.models.public_endpoint` gives it, its path included. The worker alone sees the
real values. The rules read the forms real tools use; a program that prints a secret in a form no rule knows
(a free sentence) keeps it in its own captured output, so treat a unit's ``stdout.txt`` as
the program's, not as a shareable record.

Ray is the distributed engine: with ``ray_address`` (``auto``, ``ray://host:10001``) or an initialised Ray
the units are Ray tasks; no scheduler of our own. Judge and proxy calls inside units go through the model
door, so a shared OpenAI-compatible server (vLLM) with its bounded concurrency serves them all.
"""
from __future__ import annotations

from evalkit.grid.driver import GridLocked, GridOutcome, run_grid
from evalkit.grid.masking import _mask_url, _public, _secrets, _shown
from evalkit.grid.records import _finished, _record_path, _write_record, results_table
from evalkit.grid.spec import GridSpec, GridSpecError, GridUnit, expand, fill, load_grid, parse_grid, placeholders
from evalkit.grid.unit import run_unit

__all__ = ["GridSpec", "GridUnit", "GridSpecError", "GridLocked", "GridOutcome", "load_grid", "expand", "run_unit", "run_grid",
           "results_table"]
