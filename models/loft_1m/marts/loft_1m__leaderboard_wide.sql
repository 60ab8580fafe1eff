{{ scoring_leaderboard_wide() }}
