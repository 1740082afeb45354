#!/usr/bin/env python3
"""A small, real Django admin for Toolgate's integration tests (gateway/tests/it/django_admin.rs).

It is an ordinary Django 5.2 project: one model behind the stock admin. The tests run it with
`runserver` on loopback behind a gateway. The database path comes from TOOLGATE_DJANGO_DB.
"""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hrsite.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
