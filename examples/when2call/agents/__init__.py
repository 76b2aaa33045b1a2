"""Example agents of the When2Call-style project."""
