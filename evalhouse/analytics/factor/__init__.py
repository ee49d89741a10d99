"""Factor structure: EFA, parallel analysis, omega, factorability, date adjustment, the prediction ladder."""
