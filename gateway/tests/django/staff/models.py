from django.db import models


class Employee(models.Model):
    name = models.CharField(max_length=120)
    email = models.EmailField(unique=True)
    hired = models.DateField()

    def __str__(self):
        return self.name
