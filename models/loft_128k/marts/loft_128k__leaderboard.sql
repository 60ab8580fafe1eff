{{ scoring_leaderboard() }}
