import pytest

from support import LocalCluster


@pytest.fixture
def cluster():
    local = LocalCluster()
    try:
        yield local
    finally:
        local.shutdown()
