"""Fakes that speak real wire protocols on 127.0.0.1 (see DESIGN.md, "Testing without a network")."""
