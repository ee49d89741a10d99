"""Characteristic-curve equating (paper 004 §3.1), the Epoch hub on one scale, and the ECI pipeline."""
