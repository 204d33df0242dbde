import pytest

from support import LocalCluster


@pytest.fixture(scope="session")
def head():
    """One head node for the session (it takes the longest to start); no task runs on it."""
    local = LocalCluster()
    try:
        yield local
    finally:
        local.shutdown()


@pytest.fixture
def cluster(head):
    """The head, and the worker nodes this test adds, which are removed when it ends."""
    try:
        yield head
    finally:
        head.remove_added_nodes()
