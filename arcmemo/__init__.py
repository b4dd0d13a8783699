"""ArcMemo: test-time learning through a typed, parameterized concept memory."""
