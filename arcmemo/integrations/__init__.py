"""arcmemo inside other tools (each an optional extra; importing arcmemo never needs them)."""
