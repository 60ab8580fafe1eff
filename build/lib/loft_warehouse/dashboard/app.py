"""The results dashboard's entry script (`streamlit run` needs a file); the pages are views.py."""

from loft_warehouse.dashboard.views import main

main()
