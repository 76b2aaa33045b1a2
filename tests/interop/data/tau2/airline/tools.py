"""Hand-made τ²-style toolkit for tests: read statically, never imported."""


class ToolType:
    READ = "read"
    WRITE = "write"
    GENERIC = "generic"


def is_tool(kind):
    return lambda f: f


class AirlineTools:
    @is_tool(ToolType.READ)
    def get_reservation_details(self, reservation_id: str) -> dict:
        """Get the details of a reservation.

        Args:
            reservation_id: The reservation id.
        """
        return {}

    @is_tool(ToolType.READ)
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list:
        """Search direct flights between two airports on a date."""
        return []

    @is_tool(ToolType.WRITE)
    def book_reservation(self, user_id: str, flight_id: str, passengers: int = 1) -> dict:
        """Book a reservation for a user."""
        return {}

    @is_tool(ToolType.WRITE)
    def cancel_reservation(self, reservation_id: str) -> dict:
        """Cancel a whole reservation."""
        return {}

    @is_tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the issue."""
        return "Transfer successful"

    def helper(self):
        return None
