"""What the tests share: scripted models, fake servers, fixture loaders and builders.

Test modules import from here (``from tests.support.paths import FIXTURES``), never from
another test module or a conftest; conftest files hold only fixtures and hooks. One module
per job; the data they read lives in ``tests/fixtures/``.
"""
