"""The results dashboard (`loft dashboard`): Streamlit pages over the published warehouse file."""
