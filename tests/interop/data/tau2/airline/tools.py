"""Hand-made τ²-style toolkit for tests: read statically, never imported."""

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class ToolType:
    READ = "read"
    WRITE = "write"
    GENERIC = "generic"


def is_tool(kind: str) -> Callable[[F], F]:
    def mark(f: F) -> F:
        return f

    return mark


class AirlineTools:
    @is_tool(ToolType.READ)
    def get_reservation_details(self, reservation_id: str) -> dict[str, Any]:
        """Get the details of a reservation.

        Args:
            reservation_id: The reservation id.
        """
        return {}

    @is_tool(ToolType.READ)
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[Any]:
        """Search direct flights between two airports on a date."""
        return []

    @is_tool(ToolType.WRITE)
    def book_reservation(self, user_id: str, flight_id: str, passengers: int = 1) -> dict[str, Any]:
        """Book a reservation for a user."""
        return {}

    @is_tool(ToolType.WRITE)
    def cancel_reservation(self, reservation_id: str) -> dict[str, Any]:
        """Cancel a whole reservation."""
        return {}

    @is_tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the issue."""
        return "Transfer successful"

    def helper(self) -> None:
        return None
