"""The base of every record that crosses a module or process boundary: a frozen pydantic model that refuses
fields it does not declare."""

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
