"""Streamlit pages of ``app.py``: the only place, with ``app.py``, where the app calls Streamlit."""
