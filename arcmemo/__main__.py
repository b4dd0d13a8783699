"""``python -m arcmemo``: the ``arcmemo`` command, for an environment whose scripts are not on
PATH (a checkout on PYTHONPATH, a venv that is not activated)."""

from arcmemo.cli.main import cli

if __name__ == "__main__":
    cli(prog_name="arcmemo")
