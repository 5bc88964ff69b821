"""The fuzz campaign (``python benchmarks/fuzz.py``), one module per part: sources (the real
inputs), templates_eval and templates_data (a valid command of each command family), options
(every option of every command, read from the click commands, and their odd values), mutate
(what is done to a file), cases (a case: a template with one or two things changed), runner
(running and judging cases) and cli (the command line, the table and the report)."""
