"""The memory as a tool of someone else's agent loop: :mod:`~.memory` (the Python facade,
``arcmemo.open_memory``) and :mod:`~.mcp_server` (the same memory over the Model Context
Protocol, ``arcmemo mcp``)."""
