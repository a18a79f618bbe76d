"""The background sentences the vector floor measures a query against.

Things one says to an assistant that are about nobody in particular: greetings and thanks,
general knowledge, writing, code, arithmetic, language, chat about the assistant. Each
embedding model embeds them once (timothy/retrieval/floor.py); a memory is admitted by the
vector leg only when the query is more similar to it than to every one of these, in that
model's own space. They name no person, place or thing an owner's facts would be about,
none is a question about "me", and none comes from the domains an owner's facts live in
(health, family, money, work, home, food, animals, travel, sport): a general question in
those domains ("what do pandas eat?") would stand between the owner's own questions there
("what does the cat eat?") and the answers.
Changing them changes recall for every model: measure with bench/relevance.py.
"""

from __future__ import annotations

BACKGROUND: tuple[str, ...] = (
    "Hi, how are you doing?",
    "Good afternoon!",
    "Thanks a lot, that was helpful.",
    "Okay, understood.",
    "Yes please.",
    "No thanks, that's all.",
    "Goodbye, talk soon.",
    "Can you help me with something?",
    "I'm just saying hello.",
    "What's new with you?",
    "Sorry, I didn't catch that.",
    "Please continue.",
    "Who was the president of the United States in 1960?",
    "What is the biggest country in South America?",
    "What is the atomic number of carbon?",
    "When did the Second World War end?",
    "What is the formula for the area of a circle?",
    "Which planet is closest to the Sun?",
    "Who wrote the Odyssey?",
    "How tall is the Eiffel Tower?",
    "What language do people speak in Egypt?",
    "Who composed the Four Seasons?",
    "What does DNA stand for?",
    "How does a transistor work?",
    "Why do leaves change colour in the fall?",
    "What is the difference between a comet and an asteroid?",
    "Write a short story about a lighthouse keeper.",
    "Write a sonnet about the ocean.",
    "Give me an inspirational quote.",
    "Suggest a title for a mystery novel.",
    "Write a catchy slogan for a recycling campaign.",
    "Tell me something interesting about space.",
    "Can you write a thank-you note for a colleague?",
    "Summarise the history of the Roman Empire.",
    "How do I sort a dictionary by value in JavaScript?",
    "What is the difference between TCP and UDP?",
    "Explain what a neural network is.",
    "Write a SQL query that counts rows per category.",
    "How do I centre a div with CSS?",
    "What is 45 divided by 9?",
    "What is 12 percent of 250?",
    "Convert 5 miles to kilometres.",
    "What is the definition of the word serendipity?",
    "How do you say good night in French?",
    "Correct the grammar in this sentence: me and him goes to the shop.",
    "What is an antonym of generous?",
    "Explain the theory of relativity in one paragraph.",
    "What are the rules of chess castling?",
    "Recommend a classic film from the 1950s.",
    "Give me a random fun fact.",
    "How old is the universe?",
    "What is the Pythagorean theorem?",
    "What is a prime number?",
    "What is the largest desert on Earth?",
    "Describe how a steam engine works.",
    "What's the opposite of light?",
    "Roll a die for me.",
    "Say hi to everyone.",
    "Let's talk about something else.",
    "What are you?",
)
