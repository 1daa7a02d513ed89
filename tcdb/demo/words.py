"""The demo's words: a small French web vocabulary, pronounceable filler, URLs and queries.
"""

from __future__ import annotations

import numpy as np

# A small French web vocabulary for queries and the readable part of documents.
VOCABULARY = """
assurance auto voiture prix location vacances hotel plage montagne ski train billet avion
vol horaire meteo recette cuisine gateau chocolat pain fromage vin restaurant menu livraison
pizza banque credit pret immobilier maison appartement loyer achat vente travaux jardin
piscine meuble cuisine salle bain chauffage energie electricite gaz facture impots retraite
emploi salaire formation ecole universite concours permis conduire sante medecin pharmacie
hopital vaccin dentiste lunettes sport football tennis velo course marathon musique concert
festival cinema film serie livre bibliotheque musee exposition mariage naissance anniversaire
cadeau jouet enfant bebe chien chat veterinaire animal telephone mobile forfait internet
ordinateur logiciel jeu console photo camera mode robe chaussures sac bijoux parfum beaute
coiffure mairie prefecture passeport carte identite justice avocat divorce heritage notaire
paris lyon marseille bordeaux lille nantes toulouse bretagne normandie alsace provence corse
"""

WORDS = list(dict.fromkeys(VOCABULARY.split()))

ONSETS = ["b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "ch", "tr", "pl"]

NUCLEI = ["a", "e", "i", "o", "u", "ou", "ai", "eu"]


def pseudo_words(rng: np.random.Generator, n: int) -> list[str]:
    """`n` distinct pronounceable filler words (the long tail of a web vocabulary)."""
    onsets = np.array(ONSETS)
    nuclei = np.array(NUCLEI)
    words: dict[str, None] = {}
    while len(words) < n:
        k = 2 * n
        syllables = rng.integers(2, 4, k)
        parts = [onsets[rng.integers(0, len(onsets), k)], nuclei[rng.integers(0, len(nuclei), k)],
                 onsets[rng.integers(0, len(onsets), k)], nuclei[rng.integers(0, len(nuclei), k)],
                 onsets[rng.integers(0, len(onsets), k)], nuclei[rng.integers(0, len(nuclei), k)]]
        for i in range(k):
            word = "".join(p[i] for p in parts[: 2 * int(syllables[i])])
            if word not in WORDS:
                words.setdefault(word)
            if len(words) == n:
                break
    return list(words)


def make_urls(rng: np.random.Generator, n: int) -> list[str]:
    """One stable URL per document: site, section and slug."""
    sites = pseudo_words(rng, 300)
    site = rng.integers(0, len(sites), n).tolist()
    section = rng.integers(0, len(WORDS), n).tolist()
    slug = rng.integers(0, len(WORDS), n).tolist()
    return [
        f"https://www.{sites[a]}.fr/{WORDS[b]}/{WORDS[c]}-{d}.html"
        for d, (a, b, c) in enumerate(zip(site, section, slug, strict=True))
    ]


def make_queries(rng: np.random.Generator, n: int) -> list[str]:
    """`n` distinct two-to-four-word queries from the vocabulary."""
    queries: dict[str, None] = {}
    while len(queries) < n:
        k = int(rng.integers(2, 5))
        words = rng.choice(len(WORDS), k, replace=False)
        queries.setdefault(" ".join(WORDS[w] for w in words))
    return list(queries)
