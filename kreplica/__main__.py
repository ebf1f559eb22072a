"""``python -m kreplica`` runs the same entry point as the ``kreplica`` script."""

from kreplica.cli.main import run

if __name__ == "__main__":
    run()
