"""Reading finished runs back: the paper's tables, the HTML report, joining shards."""
