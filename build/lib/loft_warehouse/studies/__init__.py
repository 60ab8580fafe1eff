"""The positional studies (Lost in the Middle, R&R): their sweep variants and prompts."""
