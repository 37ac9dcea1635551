"""Fake remote services speaking the real wire protocols on 127.0.0.1, for tests."""
