"""Validators compiled from schemas/ by tools/gen_validators.py. Do not edit."""
