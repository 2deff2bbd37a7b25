"""The Siamese Mah Jongg table companion: rules, table reading, the live loop and the dashboard."""

__version__ = "0.1.0"
