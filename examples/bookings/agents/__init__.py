"""The example's scripted agents (`python:agents.bookings_agent:good` and `:sloppy`)."""
