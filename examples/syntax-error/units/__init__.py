"""Conversions between units of length and temperature."""
