"""The harness as a tool for agents: the same evaluation as `harness eval`, called by an agent through the Model
Context Protocol (`harness mcp`) within a budget."""
